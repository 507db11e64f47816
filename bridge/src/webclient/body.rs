//! Reading a response body up to a limit, for the MCP requests and the requests of the
//! sign-in alike: a body over the limit stops the read, so that a server cannot grow the
//! memory of the bridge.

use super::client::describe;

/// Why a body could not be read.
#[derive(Debug)]
pub enum BodyError {
    /// The body is longer than the limit.
    TooLong,
    /// The connection broke; the text names no URL.
    Broken(String),
}

/// The body of `response`, at most `max` bytes.
pub async fn read_body(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| BodyError::Broken(describe(&e)))?
    {
        if body.len() + chunk.len() > max {
            return Err(BodyError::TooLong);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
