/// libcurl constants defined as macros with casts, which Swift does not import.
enum CurlAuth {
    /// `CURLAUTH_BASIC`
    static let basic = 1 << 0
    /// `CURLAUTH_DIGEST`
    static let digest = 1 << 1
}

/// `CURLOPT_SSLVERSION` values (macros in curl.h).
enum CurlTLS {
    /// `CURL_SSLVERSION_TLSv1_2`: at least TLS 1.2.
    static let minimum1_2 = 6
    /// `CURL_SSLVERSION_MAX_TLSv1_2`
    static let max1_2 = 6 << 16
    /// `CURL_SSLVERSION_MAX_TLSv1_3`
    static let max1_3 = 7 << 16
}
