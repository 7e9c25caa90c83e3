//! The value formats Kubernetes and its tools write by hand: Go-style durations on the
//! command line and in configuration, and resource quantities. A leaf crate: the client, the
//! views and the simulated server all read them, and none of those may import another.

pub mod bytes;
pub mod duration;
pub mod quantity;
