import CCurl

/// The libcurl this process loaded at run time (not the headers it was compiled against): release binaries
/// link the system's libcurl.so.4, so this is what a bug report needs.
package enum LibcurlVersion {
    package static var current: String {
        guard let info = curl_version_info(CURLVERSION_FIRST), let text = info.pointee.version else { return "unknown" }
        return String(cString: text)
    }
}
