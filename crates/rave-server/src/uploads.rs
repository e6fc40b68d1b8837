//! Photos posted with a comment: `multipart/form-data` (RFC 7578) on
//! `POST /v1/products/{id}/comments` (a `comment` part holding the JSON the
//! route takes otherwise) and on the review-request form (its own fields),
//! each with `photo` parts holding the files.
//!
//! Every file is hostile input until rave-media has checked it:
//!
//! 1. While the body is read (multer): a body whose `Content-Length` is past
//!    what the limits allow is refused before a byte of it is read (413);
//!    one without a length is cut off there. A photo past `max_photos` is a
//!    400 and one past `max_photo_bytes` a 413, both naming the part
//!    (`photo[6]`: parts are counted from 1), so no more than
//!    `max_photo_bytes + 1` bytes of a part are ever held.
//! 2. Each file goes through `rave_media::process` (its type from its bytes,
//!    the pixel limit before decoding, decoding under memory limits, the
//!    renditions re-encoded without metadata) on a blocking thread, at most
//!    [`DEFAULT_CONCURRENT_PROCESSING`] at once in the whole server: decoding
//!    a 12 MP photo takes a good part of a second of CPU and its pixels
//!    some tens of MB. A refusal is a 400 naming the part with rave-media's
//!    reason.
//! 3. Only when every file passed, [`store_photos_then_create`] puts every
//!    photo's renditions into the media store (each fsync'd there) and then
//!    writes the comment naming them, so no comment ever names a blob that
//!    is not stored. A crash between the two leaves blobs no comment names:
//!    `rave reconcile --fix` removes them.
//!
//! Nothing is stored for a post refused at steps 1 or 2, and the comment's
//! own fields are checked before any photo is stored.

use std::future::Future;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use rave_comments::{NewPhoto, PhotoId};
use rave_media::{CheckOptions, MediaId, MediaStore, ProcessError, ProcessedImage};
use tokio::sync::Semaphore;

use crate::error::{ApiError, ApiResult};
use crate::extract::MAX_BODY_BYTES;
use crate::media::PhotoLocks;

/// Photos one post may carry unless the server is told otherwise.
pub const DEFAULT_MAX_PHOTOS: usize = 5;
/// The largest photo file accepted unless the server is told otherwise.
pub const DEFAULT_MAX_PHOTO_BYTES: usize = 10 * 1024 * 1024;
/// Photos checked and encoded at once in the whole server.
pub(crate) const DEFAULT_CONCURRENT_PROCESSING: usize = 2;

/// The name of the parts holding files.
const PHOTO_PART: &str = "photo";

/// Room in a body for what is not a file: the text parts and the framing.
const FORM_OVERHEAD_BYTES: u64 = 2 * MAX_BODY_BYTES as u64;

/// How many photos a post may carry and how large each file may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadLimits {
    max_photos: usize,
    max_photo_bytes: usize,
}

/// Upload limits that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidUploadLimits {
    #[error("--max-photos must be 1 to {max}, not {0}", max = rave_comments::MAX_PHOTOS)]
    Photos(usize),
    #[error("--max-photo-bytes must be at least 1")]
    Bytes,
}

impl Default for UploadLimits {
    fn default() -> UploadLimits {
        UploadLimits {
            max_photos: DEFAULT_MAX_PHOTOS,
            max_photo_bytes: DEFAULT_MAX_PHOTO_BYTES,
        }
    }
}

impl UploadLimits {
    /// At most `max_photos` photos per post (1 to `rave_comments::MAX_PHOTOS`,
    /// what a comment may carry), each file at most `max_photo_bytes`.
    pub fn new(
        max_photos: usize,
        max_photo_bytes: usize,
    ) -> Result<UploadLimits, InvalidUploadLimits> {
        if !(1..=rave_comments::MAX_PHOTOS).contains(&max_photos) {
            return Err(InvalidUploadLimits::Photos(max_photos));
        }
        if max_photo_bytes == 0 {
            return Err(InvalidUploadLimits::Bytes);
        }
        Ok(UploadLimits {
            max_photos,
            max_photo_bytes,
        })
    }

    /// Photos one post may carry.
    pub fn max_photos(&self) -> usize {
        self.max_photos
    }

    /// The largest body a post with photos may have.
    fn max_body_bytes(&self) -> u64 {
        (self.max_photos as u64)
            .saturating_mul(self.max_photo_bytes as u64)
            .saturating_add(FORM_OVERHEAD_BYTES)
    }
}

/// The limits, and the bound on photos processed at once.
#[derive(Debug, Clone)]
pub(crate) struct Uploads {
    pub(crate) limits: UploadLimits,
    processing: Arc<Semaphore>,
}

impl Uploads {
    pub(crate) fn new(limits: UploadLimits, concurrent_processing: usize) -> Uploads {
        Uploads {
            limits,
            processing: Arc::new(Semaphore::new(concurrent_processing.max(1))),
        }
    }
}

impl Default for Uploads {
    fn default() -> Uploads {
        Uploads::new(UploadLimits::default(), DEFAULT_CONCURRENT_PROCESSING)
    }
}

/// Whether the request's body is `multipart/form-data`.
pub(crate) fn is_multipart(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media_type| {
            media_type
                .trim()
                .eq_ignore_ascii_case("multipart/form-data")
        })
}

/// A file as posted, not checked yet.
#[derive(Debug)]
pub(crate) struct PostedPhoto {
    /// `photo[1]`, `photo[2]`, … in the order of the body.
    pub(crate) part: String,
    pub(crate) bytes: Bytes,
}

/// What a multipart post carried: its text parts, and its files in order.
#[derive(Debug)]
pub(crate) struct PostedForm {
    fields: Vec<(String, String)>,
    pub(crate) photos: Vec<PostedPhoto>,
}

impl PostedForm {
    /// The text of the part `name`, if it was posted.
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.as_str())
    }

    /// The text parts, by name, in the order of the body.
    pub(crate) fn fields(&self) -> &[(String, String)] {
        &self.fields
    }
}

fn refused_part(status: StatusCode, part: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError {
        field: Some(part.to_owned().into()),
        ..ApiError::new(status, format!("{part}: {why}"))
    }
}

/// Reads a `multipart/form-data` body whose text parts are among
/// `text_parts` and whose files are `photo` parts, within the server's
/// limits (see the module's documentation).
pub(crate) async fn read_form(
    uploads: &Uploads,
    media: Option<&MediaStore>,
    request: Request,
    text_parts: &[&str],
) -> ApiResult<PostedForm> {
    let limits = uploads.limits;
    let boundary = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| multer::parse_boundary(v).ok())
        .ok_or_else(|| {
            ApiError::bad_request("Content-Type: multipart/form-data needs its boundary parameter")
        })?;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the body must be at most {} bytes: {} photos of at most {} bytes each, and the comment",
                limits.max_body_bytes(),
                limits.max_photos,
                limits.max_photo_bytes
            ),
        )
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limits.max_body_bytes()) {
        return Err(too_large());
    }
    let constraints = multer::Constraints::new()
        .size_limit(multer::SizeLimit::new().whole_stream(limits.max_body_bytes()));
    let mut multipart = multer::Multipart::with_constraints(
        request.into_body().into_data_stream(),
        boundary,
        constraints,
    );
    let malformed = |error: multer::Error| match error {
        multer::Error::StreamSizeExceeded { .. } => too_large(),
        other => ApiError::bad_request(format!("body: not a multipart/form-data body: {other}")),
    };
    let mut form = PostedForm {
        fields: Vec::new(),
        photos: Vec::new(),
    };
    let mut photo_parts = 0;
    while let Some(mut field) = multipart.next_field().await.map_err(malformed)? {
        let name = field.name().unwrap_or_default().to_owned();
        if name == PHOTO_PART {
            photo_parts += 1;
            let part = format!("{PHOTO_PART}[{photo_parts}]");
            // What a browser sends for a file input left empty; refused
            // below if it holds anything after all.
            let no_file_chosen = field.file_name() == Some("");
            if !no_file_chosen {
                refuse_another_photo(media, &limits, &part, photo_parts)?;
            }
            let bytes = read_part(&mut field, limits.max_photo_bytes)
                .await
                .map_err(malformed)?
                .ok_or_else(|| {
                    refused_part(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        &part,
                        format_args!(
                            "the file is larger than the {} bytes accepted",
                            limits.max_photo_bytes
                        ),
                    )
                })?;
            if no_file_chosen {
                if bytes.is_empty() {
                    photo_parts -= 1;
                    continue;
                }
                refuse_another_photo(media, &limits, &part, photo_parts)?;
            }
            form.photos.push(PostedPhoto { part, bytes });
        } else if text_parts.contains(&name.as_str()) {
            if form.field(&name).is_some() {
                return Err(ApiError::bad_request(format!(
                    "{name}: the part is given twice"
                )));
            }
            let bytes = read_part(&mut field, MAX_BODY_BYTES)
                .await
                .map_err(malformed)?
                .ok_or_else(|| {
                    refused_part(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        &name,
                        format_args!("the part must be at most {MAX_BODY_BYTES} bytes"),
                    )
                })?;
            let text = String::from_utf8(bytes.to_vec())
                .map_err(|_| ApiError::bad_request(format!("{name}: must be UTF-8 text")))?;
            form.fields.push((name, text));
        } else {
            return Err(ApiError::bad_request(format!(
                "body: unknown part {name:?} (the parts are {} and {PHOTO_PART})",
                text_parts.join(", ")
            )));
        }
    }
    Ok(form)
}

/// Refuses the `count`th photo of a post before it is read: one too many,
/// or any on a server without a media store.
fn refuse_another_photo(
    media: Option<&MediaStore>,
    limits: &UploadLimits,
    part: &str,
    count: usize,
) -> ApiResult<()> {
    if count > limits.max_photos {
        return Err(refused_part(
            StatusCode::BAD_REQUEST,
            part,
            format_args!("at most {} photos per comment", limits.max_photos),
        ));
    }
    if media.is_none() {
        return Err(refused_part(
            StatusCode::BAD_REQUEST,
            part,
            "this server takes no photos (it has no media store)",
        ));
    }
    Ok(())
}

/// A part's bytes, or `None` once it is past `limit` (no more of it is
/// read).
async fn read_part(
    field: &mut multer::Field<'_>,
    limit: usize,
) -> Result<Option<Bytes>, multer::Error> {
    let mut bytes = Vec::new();
    while let Some(chunk) = field.chunk().await? {
        if bytes.len() + chunk.len() > limit {
            return Ok(None);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Some(Bytes::from(bytes)))
}

/// Checks each posted file and encodes its renditions (see the module's
/// documentation); the first refusal is a 400 naming its part.
pub(crate) async fn process_photos(
    uploads: &Uploads,
    photos: Vec<PostedPhoto>,
) -> ApiResult<Vec<ProcessedImage>> {
    let mut seen: Vec<(MediaId, String)> = Vec::with_capacity(photos.len());
    for photo in &photos {
        let id = MediaId::of_upload(&photo.bytes);
        if let Some((_, first)) = seen.iter().find(|(seen, _)| *seen == id) {
            return Err(refused_part(
                StatusCode::BAD_REQUEST,
                &photo.part,
                format_args!("the same file as {first}"),
            ));
        }
        seen.push((id, photo.part.clone()));
    }
    let mut processed = Vec::with_capacity(photos.len());
    for PostedPhoto { part, bytes } in photos {
        let permit = uploads
            .processing
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping")
            })?;
        // The permit goes with the work: a client that hangs up does not
        // free a slot while its photo is still being decoded.
        let outcome = tokio::task::spawn_blocking(move || {
            let outcome = rave_media::process(&bytes, &CheckOptions::default());
            drop(permit);
            outcome
        })
        .await
        .map_err(|error| {
            tracing::error!(%error, "processing a photo failed");
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "processing a photo failed",
            )
        })?;
        match outcome {
            Ok(image) => processed.push(image),
            Err(ProcessError::Refused(refusal)) => {
                return Err(refused_part(StatusCode::BAD_REQUEST, &part, refusal));
            }
            Err(ProcessError::Render(error)) => {
                tracing::error!(%error, %part, "encoding a photo's renditions failed");
                return Err(ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("{part}: its renditions could not be encoded"),
                ));
            }
        }
    }
    Ok(processed)
}

/// The reference a comment keeps to a processed photo.
fn new_photo(image: &ProcessedImage) -> ApiResult<NewPhoto> {
    let internal = |what: &str| {
        tracing::error!(id = %image.id, what, "a processed photo cannot be referenced");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
    };
    let (width, height) = image
        .display_dimensions()
        .ok_or_else(|| internal("no display rendition"))?;
    Ok(NewPhoto {
        id: PhotoId::parse(image.id.as_str()).map_err(|_| internal("its id"))?,
        width,
        height,
    })
}

/// Stores every photo's renditions in the media store, and only then runs
/// `create` with the references the comment keeps, so a comment is never
/// written naming a blob that is not durably stored. The outer error is
/// the media store's (nothing is created); the inner result is `create`'s.
///
/// The photos' locks (`media::locks`) are held from storing them until the
/// comment is written: a deletion of the same photo's last other comment
/// either sees this comment's reference or runs before the photo is stored
/// again.
pub(crate) async fn store_photos_then_create<T, E, F, Fut>(
    media: Option<&MediaStore>,
    locks: &PhotoLocks,
    photos: &[ProcessedImage],
    create: F,
) -> ApiResult<Result<T, E>>
where
    F: FnOnce(Vec<NewPhoto>) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let references = photos
        .iter()
        .map(new_photo)
        .collect::<ApiResult<Vec<_>>>()?;
    let _locked = locks
        .lock_all(references.iter().map(|photo| &photo.id))
        .await;
    if !photos.is_empty() {
        let store = media.ok_or_else(|| {
            ApiError::bad_request("photo: this server takes no photos (it has no media store)")
        })?;
        for image in photos {
            store.put_image(image).await.map_err(|error| {
                tracing::error!(%error, id = %image.id, "storing a photo");
                ApiError {
                    retry_after: Some(1),
                    ..ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "the media store cannot keep photos now; retry later",
                    )
                }
            })?;
        }
    }
    Ok(create(references).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_are_what_a_comment_may_carry() {
        assert_eq!(UploadLimits::new(0, 1), Err(InvalidUploadLimits::Photos(0)));
        assert_eq!(
            UploadLimits::new(rave_comments::MAX_PHOTOS + 1, 1),
            Err(InvalidUploadLimits::Photos(rave_comments::MAX_PHOTOS + 1))
        );
        assert_eq!(UploadLimits::new(5, 0), Err(InvalidUploadLimits::Bytes));
        let limits = UploadLimits::new(rave_comments::MAX_PHOTOS, 1000).unwrap();
        assert_eq!(
            limits.max_body_bytes(),
            rave_comments::MAX_PHOTOS as u64 * 1000 + FORM_OVERHEAD_BYTES
        );
    }

    #[test]
    fn only_multipart_form_data_is_a_form_with_photos() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, value.parse().unwrap());
            is_multipart(&headers)
        };
        assert!(with("multipart/form-data; boundary=x"));
        assert!(with("Multipart/Form-Data;boundary=x"));
        assert!(!with("application/json"));
        assert!(!with("multipart/mixed; boundary=x"));
        assert!(!is_multipart(&HeaderMap::new()));
    }
}
