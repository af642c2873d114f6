#!/usr/bin/env bash
# Makes the media test files with real tools: images with libvips and EXIF written by exiftool,
# a PDF by rsvg-convert (cairo) with its title and author set by exiftool, MP3/FLAC/Ogg/M4A audio
# by lame, flac, oggenc and ffmpeg with their tags, MP4 and WebM video by ffmpeg (one turned by its
# display matrix, as phones record), and hostile files (truncated, corrupt, a 50,000 x 50,000
# PNG header). The tests compare what the gateway reads with `exiftool -j -n` on the same files.
#
#   scripts/media-fixtures.sh DIR        (idempotent: does nothing when DIR is complete)
#
# Also makes the large files the byte-count tests and the benchmark use: big.jpg (24 megapixels,
# about 20 MB), big.mp3 (100 MB: the tagged song, then zeros, then its ID3v1 tag) and big.m4a (five
# minutes of Apple Lossless, about 25 MB, its `moov` atom after the audio as ffmpeg writes it).
set -euo pipefail
out=${1:?usage: scripts/media-fixtures.sh DIR}
version=7
[ -f "$out/.complete-$version" ] && exit 0
# One maker at a time (test processes may ask at once).
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
flock 9
[ -f "$out/.complete-$version" ] && exit 0
for tool in vips exiftool lame flac oggenc ffmpeg rsvg-convert python3; do
    command -v "$tool" >/dev/null || { echo "media-fixtures: $tool is missing (run scripts/setup-deps.sh)" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$out"
export VIPS_WARNING=0

exif_tags=(-Make=Canon "-Model=EOS R5" "-DateTimeOriginal=2024:05:01 12:34:56" "-OffsetTimeOriginal=+02:00"
    -Orientation#=6 -GPSLatitude=48.8584 -GPSLatitudeRef=N -GPSLongitude=2.2945 -GPSLongitudeRef=W
    -ExposureTime=1/250 -FNumber=2.8 -ISO=400)

# A 1200 x 800 image, white on top and black below, so a thumbnail shows which way it was turned.
vips black "$work/base.v" 1200 800 --bands 3
vips draw_rect "$work/base.v" "255 255 255" 0 0 1200 400 --fill
vips draw_rect "$work/base.v" "255 0 0" 0 400 100 400 --fill
vips jpegsave "$work/base.v" photo.jpg --Q 90
exiftool -q -overwrite_original "${exif_tags[@]}" photo.jpg
vips bandjoin_const "$work/base.v" "$work/alpha.v" 128
vips pngsave "$work/alpha.v" photo.png
vips pngsave "$work/base.v" exif.png
exiftool -q -overwrite_original -Make=Canon "-Model=EOS R5" -ISO=200 exif.png
vips webpsave "$work/base.v" photo.webp --Q 80
vips copy "$work/base.v" photo.gif
vips tiffsave "$work/base.v" photo.tiff --compression deflate
vips heifsave "$work/base.v" photo.heic --Q 60
vips heifsave "$work/base.v" photo.avif --Q 60 --compression av1
# (-q -q: exiftool warns that the EXIF libvips wrote into the WebP is "improper", then rewrites it.)
exiftool -q -q -overwrite_original "${exif_tags[@]}" photo.webp
cat > vector.svg <<'SVG'
<svg xmlns="http://www.w3.org/2000/svg" width="300" height="150" viewBox="0 0 300 150">
  <rect width="300" height="75" fill="#ffffff"/><rect y="75" width="300" height="75" fill="#000000"/>
</svg>
SVG

# A three-page PDF (A5 pages: 420 x 595 points) with document information.
for page in 1 2 3; do
    printf '<svg xmlns="http://www.w3.org/2000/svg" width="420pt" height="595pt" viewBox="0 0 420 595"><rect width="420" height="595" fill="#fff"/><text x="40" y="80" font-size="40">Page %s</text></svg>\n' "$page" > "$work/page$page.svg"
done
rsvg-convert -f pdf -o doc.pdf "$work/page1.svg" "$work/page2.svg" "$work/page3.svg"
exiftool -q -overwrite_original "-Title=Quarterly Report" "-Author=Ada Lovelace" doc.pdf

# Five seconds of stereo tone, encoded and tagged by each encoder.
python3 - "$work/tone.wav" <<'PY'
import math, struct, sys, wave
with wave.open(sys.argv[1], "wb") as w:
    w.setnchannels(2); w.setsampwidth(2); w.setframerate(44100)
    frames = bytearray()
    for i in range(44100 * 5):
        v = int(8000 * math.sin(2 * math.pi * 440 * i / 44100))
        frames += struct.pack("<hh", v, v)
    w.writeframes(bytes(frames))
PY
lame --quiet -b 128 --tt "Gateway Song" --ta "The Testers" --tl "Fixtures" --ty 2021 --tn 3 --tg Rock --add-id3v2 "$work/tone.wav" song.mp3
flac --silent --force -o song.flac --tag="TITLE=Gateway Song" --tag="ARTIST=The Testers" --tag="ALBUM=Fixtures" \
    --tag="DATE=2021" --tag="TRACKNUMBER=3" --tag="GENRE=Rock" "$work/tone.wav"
oggenc --quiet -q 3 -o song.ogg -t "Gateway Song" -a "The Testers" -l "Fixtures" -d 2021 -N 3 -G Rock "$work/tone.wav"
m4a_tags=(-metadata "title=Gateway Song" -metadata "artist=The Testers" -metadata "album=Fixtures" -metadata date=2021
    -metadata track=3 -metadata genre=Rock)
ffmpeg -nostdin -loglevel error -i "$work/tone.wav" -c:a aac -b:a 128k "${m4a_tags[@]}" song.m4a

# Four seconds of video: white on top, black below, a red bar at the bottom left (so a poster
# shows which way it was turned), with a tone. H.264/AAC in MP4, VP9/Opus in WebM, and the MP4
# again with a display matrix that turns it a quarter (exiftool: Rotation 270; the ffmpeg tool
# shows it turned a quarter counterclockwise, white on the left).
picture="color=c=white:s=320x240:r=25:d=4,drawbox=x=0:y=120:w=320:h=120:color=black:t=fill,drawbox=x=0:y=120:w=40:h=120:color=red:t=fill"
ffmpeg -nostdin -loglevel error -f lavfi -i "$picture" -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=4" \
    -c:v libx264 -pix_fmt yuv420p -c:a aac -ac 2 -b:a 96k -shortest clip.mp4
ffmpeg -nostdin -loglevel error -f lavfi -i "$picture" -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=4" \
    -c:v libvpx-vp9 -b:v 200k -c:a libopus -ac 2 -shortest clip.webm
ffmpeg -nostdin -loglevel error -i clip.mp4 -c copy -metadata:s:v:0 rotate=90 phone.mp4
ffmpeg -nostdin -loglevel error -i clip.mp4 -c copy -movflags +faststart "$work/faststart.mp4"

# The large files: a 24-megapixel photo (noise, so it stays about 20 MB as JPEG) with the same
# EXIF, and a 100 MB MP3 (the song's ID3v2 tag and frames, zeros, its ID3v1 tag; sparse on disk).
vips gaussnoise "$work/noise.v" 6000 4000 --sigma 60
vips bandjoin "$work/noise.v $work/noise.v $work/noise.v" "$work/noise3.v"
vips copy "$work/noise3.v" "$work/noise-srgb.v" --interpretation srgb
vips jpegsave "$work/noise-srgb.v" big.jpg --Q 92
exiftool -q -overwrite_original "${exif_tags[@]}" big.jpg
ffmpeg -nostdin -loglevel error -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=300" -ac 2 -c:a alac \
    "${m4a_tags[@]}" big.m4a
python3 - song.mp3 big.mp3 <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
assert data[-128:-125] == b"TAG", "lame wrote no ID3v1 tag"
with open(sys.argv[2], "wb") as f:
    f.write(data[:-128])
    f.seek(100 * 1024 * 1024 - 128)
    f.write(data[-128:])
PY

# Hostile files.
mkdir -p hostile
head -c "$(( $(stat -c %s photo.jpg) / 2 ))" photo.jpg > hostile/truncated.jpg
{ head -c 2048 photo.jpg; head -c 40000 /dev/urandom; } > hostile/corrupt.jpg
printf 'this is not an image\n' > hostile/text.png
: > hostile/empty.jpg
head -c 1500 doc.pdf > hostile/truncated.pdf
head -c 3000 song.mp3 > hostile/truncated.mp3
# An MP4 cut in half (its index, written last, is gone), and one whose index is whole but whose
# frames are noise.
head -c "$(( $(stat -c %s clip.mp4) / 2 ))" clip.mp4 > hostile/truncated.mp4
python3 - "$work/faststart.mp4" hostile/corrupt.mp4 <<'PY'
import os, struct, sys
data = open(sys.argv[1], "rb").read()
offset = 0
while data[offset + 4:offset + 8] != b"mdat":
    offset += struct.unpack(">I", data[offset:offset + 4])[0]
open(sys.argv[2], "wb").write(data[:offset + 8] + os.urandom(len(data) - offset - 8))
PY
python3 - hostile/bomb.png <<'PY'
import struct, sys, zlib
def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)
width = height = 50000
row = b"\x00" + b"\x00" * (width * 3)
idat = zlib.compressobj(9)
body = b"".join(idat.compress(row) for _ in range(64)) + idat.flush()
with open(sys.argv[1], "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + chunk(b"IDAT", body) + chunk(b"IEND", b""))
PY
printf 'plain text, no media\n' > notes.txt
touch ".complete-$version"
