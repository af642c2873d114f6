// See include/CTagLibStream.h.
#include "CTagLibStream.h"
#include <cstdlib>
#include <cstring>
#include <string>
#include <taglib/fileref.h>
#include <taglib/tag.h>
#include <taglib/tiostream.h>
#include <taglib/tdebuglistener.h>
#include <taglib/mpegfile.h>
#include <taglib/flacfile.h>
#include <taglib/vorbisfile.h>
#include <taglib/opusfile.h>
#include <taglib/oggflacfile.h>
#include <taglib/speexfile.h>
#include <taglib/mp4file.h>
#include <taglib/wavfile.h>
#include <taglib/aifffile.h>
#include <taglib/apefile.h>
#include <taglib/asffile.h>
#include <taglib/wavpackfile.h>
#include <taglib/mpcfile.h>

namespace {

// A read-only TagLib stream over the callback. Reads past the end return fewer bytes, as a file does.
class CallbackStream : public TagLib::IOStream {
public:
    explicit CallbackStream(const gw_taglib_io *io) : io_(io), position_(0) {}
    TagLib::FileName name() const override { return io_->name != nullptr ? io_->name : ""; }
    TagLib::ByteVector readBlock(unsigned long length) override {
        if (position_ < 0 || position_ >= io_->size || length == 0) return TagLib::ByteVector();
        // At most what is left of the file and at most maxBlock: a hostile atom or tag length
        // can neither overflow ByteVector's unsigned int size nor allocate gigabytes.
        unsigned long long wanted = length;
        unsigned long long left = static_cast<unsigned long long>(io_->size - position_);
        if (wanted > left) wanted = left;
        if (wanted > maxBlock) wanted = maxBlock;
        TagLib::ByteVector block(static_cast<unsigned int>(wanted), '\0');
        long long got = io_->read(io_->context, position_, block.data(), static_cast<long long>(wanted));
        if (got > static_cast<long long>(wanted)) got = static_cast<long long>(wanted);
        if (got <= 0) return TagLib::ByteVector();
        block.resize(static_cast<unsigned int>(got));
        position_ += got;
        return block;
    }
    void writeBlock(const TagLib::ByteVector &) override {}
    void insert(const TagLib::ByteVector &, unsigned long, unsigned long) override {}
    void removeBlock(unsigned long, unsigned long) override {}
    bool readOnly() const override { return true; }
    bool isOpen() const override { return true; }
    void seek(long offset, Position p) override {
        long long base = p == Beginning ? 0 : (p == Current ? position_ : io_->size);
        long long target;
        // Saturating: a hostile offset near LONG_MAX must not overflow (undefined behaviour).
        if (__builtin_add_overflow(base, static_cast<long long>(offset), &target)) target = offset < 0 ? 0 : io_->size;
        position_ = target < 0 ? 0 : target;
    }
    void clear() override {}
    long tell() const override { return static_cast<long>(position_); }
    long length() override { return static_cast<long>(io_->size); }
    void truncate(long) override {}
private:
    static constexpr unsigned long long maxBlock = 64ull << 20;
    const gw_taglib_io *io_;
    long long position_;
};

// TagLib prints its complaints about damaged files to stderr; a library must stay quiet.
class QuietListener : public TagLib::DebugListener {
public:
    void printMessage(const TagLib::String &) override {}
};
QuietListener quiet;

char *copy(const TagLib::String &value) {
    if (value.isEmpty()) return nullptr;
    std::string utf8 = value.to8Bit(true);
    char *result = static_cast<char *>(std::malloc(utf8.size() + 1));
    if (result != nullptr) std::memcpy(result, utf8.c_str(), utf8.size() + 1);
    return result;
}

const char *formatOf(TagLib::File *file) {
    if (dynamic_cast<TagLib::MPEG::File *>(file)) return "mp3";
    if (dynamic_cast<TagLib::FLAC::File *>(file)) return "flac";
    if (dynamic_cast<TagLib::Ogg::Vorbis::File *>(file)) return "ogg";
    if (dynamic_cast<TagLib::Ogg::Opus::File *>(file)) return "opus";
    if (dynamic_cast<TagLib::Ogg::FLAC::File *>(file)) return "ogg";
    if (dynamic_cast<TagLib::Ogg::Speex::File *>(file)) return "speex";
    if (dynamic_cast<TagLib::MP4::File *>(file)) return "mp4";
    if (dynamic_cast<TagLib::RIFF::WAV::File *>(file)) return "wav";
    if (dynamic_cast<TagLib::RIFF::AIFF::File *>(file)) return "aiff";
    if (dynamic_cast<TagLib::APE::File *>(file)) return "ape";
    if (dynamic_cast<TagLib::ASF::File *>(file)) return "asf";
    if (dynamic_cast<TagLib::WavPack::File *>(file)) return "wavpack";
    if (dynamic_cast<TagLib::MPC::File *>(file)) return "mpc";
    return "audio";
}

} // namespace

static int readTags(const gw_taglib_io *io, gw_taglib_info *info);

extern "C" int gw_taglib_read(const gw_taglib_io *io, gw_taglib_info *info) {
    std::memset(info, 0, sizeof(*info));
    // No C++ exception may cross into C (and Swift): an allocation failure is "not recognised".
    try {
        return readTags(io, info);
    } catch (...) {
        gw_taglib_info_free(info);
        return 1;
    }
}

static int readTags(const gw_taglib_io *io, gw_taglib_info *info) {
    TagLib::setDebugListener(&quiet);
    CallbackStream stream(io);
    TagLib::FileRef ref(&stream, true, TagLib::AudioProperties::Average);
    if (ref.isNull() || ref.file() == nullptr || !ref.file()->isValid()) return 1;
    info->format = copy(TagLib::String(formatOf(ref.file())));
    if (TagLib::Tag *tag = ref.tag()) {
        info->title = copy(tag->title());
        info->artist = copy(tag->artist());
        info->album = copy(tag->album());
        info->genre = copy(tag->genre());
        info->year = tag->year();
        info->track = tag->track();
    }
    if (TagLib::AudioProperties *properties = ref.audioProperties()) {
        info->has_audio_properties = 1;
        info->length_ms = properties->lengthInMilliseconds();
        info->bitrate_kbps = properties->bitrate();
        info->sample_rate = properties->sampleRate();
        info->channels = properties->channels();
    }
    return 0;
}

extern "C" void gw_taglib_info_free(gw_taglib_info *info) {
    std::free(info->format);
    std::free(info->title);
    std::free(info->artist);
    std::free(info->album);
    std::free(info->genre);
    std::memset(info, 0, sizeof(*info));
}
