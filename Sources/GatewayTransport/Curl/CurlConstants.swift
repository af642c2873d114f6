/// libcurl constants defined as macros with casts, which Swift does not import.
enum CurlAuth {
    /// `CURLAUTH_BASIC`
    static let basic = 1 << 0
    /// `CURLAUTH_DIGEST`
    static let digest = 1 << 1
}
