//! The kinds of image rave accepts, named as an uploader knows them.

/// The image types rave accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageType {
    Jpeg,
    Png,
    Webp,
}

impl std::fmt::Display for ImageType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ImageType::Jpeg => "JPEG",
            ImageType::Png => "PNG",
            ImageType::Webp => "WebP",
        })
    }
}
