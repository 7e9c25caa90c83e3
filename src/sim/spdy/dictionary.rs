//! The preset zlib dictionary of SPDY/3 header blocks (the draft's section 2.6.10.1): common
//! header names, each behind its length as four big-endian bytes, then a run of common values.
//! Both ends must hold the same bytes, or the first header block of a connection fails to
//! inflate; kept as the word list it is made of, which is easier to check than 1423 escaped bytes.

use std::sync::LazyLock;

/// The length-prefixed entries, in the draft's order.
const WORDS: [&str; 65] = [
    "options",
    "head",
    "post",
    "put",
    "delete",
    "trace",
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "connection",
    "content-base",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-md5",
    "content-range",
    "content-type",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "location",
    "max-forwards",
    "pragma",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "retry-after",
    "server",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "vary",
    "via",
    "warning",
    "www-authenticate",
    "method",
    "get",
    "status",
    "200 OK",
    "version",
    "HTTP/1.1",
    "url",
    "public",
    "set-cookie",
    "keep-alive",
    "origin",
];

/// The values after the entries, with no length prefixes and no trailing NUL.
const TAIL: &str = concat!(
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505",
    "203 Non-Authoritative Information",
    "204 No Content",
    "301 Moved Permanently",
    "400 Bad Request",
    "401 Unauthorized",
    "403 Forbidden",
    "404 Not Found",
    "500 Internal Server Error",
    "501 Not Implemented",
    "503 Service Unavailable",
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 ",
    "Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT",
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,",
    "text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdch",
    "charset=utf-8charset=iso-8859-1,utf-,*,enq=0.",
);

static DICTIONARY: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let mut bytes = Vec::with_capacity(1423);
    for word in WORDS {
        let len = u32::try_from(word.len()).unwrap_or(u32::MAX);
        bytes.extend_from_slice(&len.to_be_bytes());
        bytes.extend_from_slice(word.as_bytes());
    }
    bytes.extend_from_slice(TAIL.as_bytes());
    bytes
});

/// The dictionary's bytes.
pub(super) fn dictionary() -> &'static [u8] {
    &DICTIONARY
}
