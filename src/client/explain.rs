//! A failed list or watch in a person's words: refused credentials or permissions, an
//! untrusted certificate, an unreachable server. `kscope get` and the TUI's header say the same.

use kscope_informers::lister_watcher::{ListWatchError, innermost_cause};
use kscope_informers::reflector::ReflectorError;

/// What went wrong, in one line, for a person.
pub fn reflector_error(err: &ReflectorError) -> String {
    match err {
        ReflectorError::ListWatch(ListWatchError::Api {
            verb,
            resource,
            status,
        }) => match status.code {
            401 => format!(
                "unauthorized: the server refused our credentials to {verb} {resource} ({})",
                status.message
            ),
            403 => format!(
                "forbidden: not allowed to {verb} {resource}: {}",
                status.message
            ),
            _ => err.to_string(),
        },
        ReflectorError::ListWatch(ListWatchError::Transport { source, .. }) => {
            if let Some(limit) = source.downcast_ref::<crate::lister_watcher::LimitError>() {
                // It answered, or at least took the request: too slowly, or too much.
                return format!("the API server answered outside kscope's bounds: {limit}");
            }
            match untrusted_certificate(source.as_ref()) {
                Some(cause) => format!(
                    "the API server's certificate is not trusted ({cause}): it is not the \
                     server the kubeconfig's certificate-authority names, or it was restarted \
                     with a new CA"
                ),
                None => format!(
                    "cannot reach the API server: {}",
                    innermost_cause(source.as_ref())
                ),
            }
        }
        _ => err.to_string(),
    }
}

/// The TLS verdict on the server's certificate, if that is why a request failed. An
/// `io::Error` hides what it wraps from `source()`, so each is opened with `get_ref`.
fn untrusted_certificate(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut next = Some(err);
    while let Some(current) = next {
        if let Some(tls @ rustls::Error::InvalidCertificate(_)) =
            current.downcast_ref::<rustls::Error>()
        {
            return Some(tls.to_string());
        }
        next = match current.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => current.source(),
        };
    }
    None
}
