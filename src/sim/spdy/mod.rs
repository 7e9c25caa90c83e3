//! SPDY/3.1 framing as Kubernetes speaks it for `kubectl port-forward` (moby/spdystream on
//! both kubectl's and the kubelet's side): the frames, their zlib-compressed header blocks
//! and a tokio codec that carries both over one connection. Malformed input is a typed
//! error, never a panic: the bytes come from the network.

mod dictionary;
mod frame;
mod header_block;
#[cfg(test)]
mod tests;

pub(crate) use frame::{Codec, Frame, FrameError, goaway, rst};
pub(crate) use header_block::Headers;
