import CCurl
import Foundation
import GatewayCore

extension CURLcode {
    /// The Foundation `URLError` that best describes a libcurl failure, carrying the remote path
    /// (never the URL, which the caller may have built with credentials).
    func urlError(path: String, remote: String) -> URLError {
        let code: URLError.Code
        switch self {
        case CURLE_COULDNT_CONNECT: code = .cannotConnectToHost
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: code = .cannotFindHost
        case CURLE_OPERATION_TIMEDOUT: code = .timedOut
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM,
             CURLE_SEND_FAIL_REWIND,
             // FTP data connections that could not be set up (a garbled or refused EPSV/PASV/PORT).
             CURLE_FTP_WEIRD_PASV_REPLY, CURLE_FTP_WEIRD_227_FORMAT, CURLE_FTP_CANT_GET_HOST, CURLE_FTP_ACCEPT_FAILED,
             CURLE_FTP_ACCEPT_TIMEOUT, CURLE_FTP_PORT_FAILED:
            code = .networkConnectionLost
        case CURLE_PEER_FAILED_VERIFICATION: code = .serverCertificateUntrusted
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
             CURLE_USE_SSL_FAILED:
            code = .secureConnectionFailed
        case CURLE_LOGIN_DENIED: code = .userAuthenticationRequired
        case CURLE_TOO_MANY_REDIRECTS: code = .httpTooManyRedirects
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: code = .unsupportedURL
        case CURLE_ABORTED_BY_CALLBACK: code = .cancelled
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING: code = .badServerResponse
        default: code = .unknown
        }
        let text = String(cString: curl_easy_strerror(self))
        return URLError(code, userInfo: [
            NSLocalizedDescriptionKey: text,
            NSFilePathErrorKey: path,
            GatewayRemoteNameErrorKey: remote,
            "CurlCode": Int(rawValue),
        ])
    }
}
