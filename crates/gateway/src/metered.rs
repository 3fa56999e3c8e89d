//! An upstream's response body on its way to the agent: each frame passes at once, its bytes
//! counted and its usage read; when the body ends (or the agent leaves, dropping it) the
//! request's record is finished, its tokens added to the round's spend, and handed on.

use crate::body::BoxError;
use crate::grants::Spend;
use crate::record::{RecordSink, RequestRecord};
use crate::usage::UsageScanner;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

pub(crate) struct Metered {
    inner: Incoming,
    pending: Option<Pending>,
}

/// What the record still needs when the body ends.
pub(crate) struct Pending {
    pub record: RequestRecord,
    pub scanner: UsageScanner,
    pub started: Instant,
    pub spend: Arc<Spend>,
    pub sink: RecordSink,
}

impl Metered {
    pub fn new(inner: Incoming, pending: Pending) -> Metered {
        Metered {
            inner,
            pending: Some(pending),
        }
    }

    fn finish(&mut self, cut: bool) {
        let Some(mut pending) = self.pending.take() else {
            return;
        };
        let tokens = pending.scanner.finish();
        pending.spend.add(tokens);
        pending.record.tokens = tokens;
        pending.record.cut = cut;
        pending.record.total_ms = pending.started.elapsed().as_secs_f64() * 1000.0;
        (pending.sink)(pending.record);
    }
}

impl Body for Metered {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let (Some(data), Some(pending)) = (frame.data_ref(), this.pending.as_mut()) {
                    pending.record.bytes_down += data.len() as u64;
                    pending.scanner.feed(data);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.finish(true);
                Poll::Ready(Some(Err(Box::new(e))))
            }
            Poll::Ready(None) => {
                this.finish(false);
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Metered {
    fn drop(&mut self) {
        // The agent left before the end: what was counted is what was spent.
        let cut = !self.inner.is_end_stream();
        self.finish(cut);
    }
}
