//! An upload from bytes to renditions: `check`, then `render`.

use crate::check::{CheckOptions, check};
use crate::error::{Refusal, RenderError};
use crate::key::MediaId;
use crate::render::{ProcessedImage, render};

/// Why an upload could not be processed: the uploader's fault (a 4xx) or
/// the server's (a 5xx).
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    Render(#[from] RenderError),
}

/// Checks an upload and encodes its renditions; its id is the SHA-256 of
/// `bytes`.
pub fn process(bytes: &[u8], options: &CheckOptions) -> Result<ProcessedImage, ProcessError> {
    let checked = check(bytes, options)?;
    Ok(render(MediaId::of_upload(bytes), &checked)?)
}
