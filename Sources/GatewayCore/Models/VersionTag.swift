/// Comparing version tags (``FileObject/versionTag``) as RFC 9110's weak comparison does.
public enum VersionTag {
    /// Whether `a` and `b` name the same version: an ETag's weak marker (`W/`) is not part of
    /// it. Apache marks a file's ETag weak during the second the file was written and strong
    /// afterwards, so the same version is seen with and without it.
    public static func same(_ a: String, _ b: String) -> Bool {
        opaque(a) == opaque(b)
    }

    /// The tag without its weak marker.
    public static func opaque(_ tag: String) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
    }
}
