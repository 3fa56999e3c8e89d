//! The failures the fake model can produce instead of an answer, by name, as scripts and the
//! command line spell them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A failure the fake model can produce instead of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Fault {
    /// HTTP 401 with an error body: a bad or missing API key.
    #[serde(rename = "http-401")]
    Http401,
    /// HTTP 429 with an error body: rate limited.
    #[serde(rename = "http-429")]
    Http429,
    /// HTTP 500 with an error body: the provider failed.
    #[serde(rename = "http-500")]
    Http500,
    /// The request is read and never answered; the connection stays open.
    #[serde(rename = "hang")]
    Hang,
    /// A 200 whose answer starts and then the connection closes without finishing it.
    #[serde(rename = "cut")]
    Cut,
    /// A 200 whose body is not valid JSON (nor valid SSE JSON when streaming).
    #[serde(rename = "garbage")]
    Garbage,
}

impl Fault {
    /// Every fault, in the order the docs list them.
    pub const ALL: [Fault; 6] = [
        Fault::Http401,
        Fault::Http429,
        Fault::Http500,
        Fault::Hang,
        Fault::Cut,
        Fault::Garbage,
    ];

    /// The name used in scripts and on the command line (`http-500`, `hang`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Fault::Http401 => "http-401",
            Fault::Http429 => "http-429",
            Fault::Http500 => "http-500",
            Fault::Hang => "hang",
            Fault::Cut => "cut",
            Fault::Garbage => "garbage",
        }
    }

    /// The HTTP status of a fault that is an error response.
    pub fn http_status(self) -> Option<u16> {
        match self {
            Fault::Http401 => Some(401),
            Fault::Http429 => Some(429),
            Fault::Http500 => Some(500),
            Fault::Hang | Fault::Cut | Fault::Garbage => None,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A fault name that is not one of [`Fault::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown fault {given:?}; expected one of http-401, http-429, http-500, hang, cut, garbage"
)]
pub struct UnknownFault {
    /// What was given.
    pub given: String,
}

impl FromStr for Fault {
    type Err = UnknownFault;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Fault::ALL
            .into_iter()
            .find(|fault| fault.name() == name)
            .ok_or_else(|| UnknownFault {
                given: name.to_owned(),
            })
    }
}

/// A fault and the retry headers it sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultSpec {
    /// What goes wrong.
    pub fault: Fault,
    /// When set, 429 and 500 answers carry `retry-after-ms: N` and `retry-after: ceil(N/1000)`.
    pub retry_after_ms: Option<u64>,
}

impl FaultSpec {
    /// A fault without retry headers.
    pub fn new(fault: Fault) -> Self {
        FaultSpec {
            fault,
            retry_after_ms: None,
        }
    }

    /// The same fault with retry headers.
    pub fn retry_after_ms(mut self, millis: u64) -> Self {
        self.retry_after_ms = Some(millis);
        self
    }
}
