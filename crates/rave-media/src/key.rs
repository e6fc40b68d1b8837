//! How a stored rendition is named.
//!
//! A photo's id is the SHA-256 (lower-case hex) of the bytes that were
//! uploaded: the same upload always gets the same id, and an id says
//! nothing of the photo but that. Its renditions are stored as
//! `<id>/<size>.<ext>`: `display.webp`, `display.jpg`, `thumb.webp`,
//! `thumb.jpg`. Every name is checked when parsed, so a key taken from a
//! URL can never name anything else (no `..`, no separator, no other
//! extension).

use sha2::{Digest, Sha256};

/// A photo's id: 64 lower-case hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MediaId(String);

impl MediaId {
    /// The id of an upload.
    pub fn of_upload(bytes: &[u8]) -> MediaId {
        MediaId(hex::encode(Sha256::digest(bytes)))
    }

    /// Reads an id, `None` unless it is 64 lower-case hex digits.
    pub fn parse(text: &str) -> Option<MediaId> {
        let valid = text.len() == 64
            && text
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
        valid.then(|| MediaId(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for MediaId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The two sizes each photo is kept in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Size {
    /// Long edge at most 1,600 pixels: what the viewer shows.
    Display,
    /// Long edge at most 320 pixels: what a comment shows inline.
    Thumbnail,
}

impl Size {
    pub const ALL: [Size; 2] = [Size::Display, Size::Thumbnail];

    /// The longest edge of this size, in pixels.
    pub fn long_edge(self) -> u32 {
        match self {
            Size::Display => 1600,
            Size::Thumbnail => 320,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Size::Display => "display",
            Size::Thumbnail => "thumb",
        }
    }
}

/// The two encodings of each size: WebP, and JPEG for clients without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Encoding {
    Webp,
    Jpeg,
}

impl Encoding {
    pub const ALL: [Encoding; 2] = [Encoding::Webp, Encoding::Jpeg];

    pub fn extension(self) -> &'static str {
        match self {
            Encoding::Webp => "webp",
            Encoding::Jpeg => "jpg",
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Webp => "image/webp",
            Encoding::Jpeg => "image/jpeg",
        }
    }
}

/// One rendition of a photo: a size in an encoding (`display.webp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rendition {
    pub size: Size,
    pub encoding: Encoding,
}

impl Rendition {
    /// Every rendition a photo is stored in.
    pub fn all() -> impl Iterator<Item = Rendition> {
        Size::ALL.into_iter().flat_map(|size| {
            Encoding::ALL
                .into_iter()
                .map(move |encoding| Rendition { size, encoding })
        })
    }

    /// Its file name, `display.webp`.
    pub fn file_name(self) -> String {
        format!("{}.{}", self.size.name(), self.encoding.extension())
    }

    /// Reads a file name; `None` unless it is one of the four.
    pub fn parse(file_name: &str) -> Option<Rendition> {
        Rendition::all().find(|rendition| rendition.file_name() == file_name)
    }
}

/// Where one rendition of one photo is stored: `<id>/<size>.<ext>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MediaKey {
    pub id: MediaId,
    pub rendition: Rendition,
}

impl MediaKey {
    /// Reads `<id>/<size>.<ext>`; `None` for anything else.
    pub fn parse(key: &str) -> Option<MediaKey> {
        let (id, file_name) = key.split_once('/')?;
        Some(MediaKey {
            id: MediaId::parse(id)?,
            rendition: Rendition::parse(file_name)?,
        })
    }

    pub fn content_type(&self) -> &'static str {
        self.rendition.encoding.content_type()
    }
}

impl std::fmt::Display for MediaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.id, self.rendition.file_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_back_and_refuse_anything_else() {
        let id = MediaId::of_upload(b"photo");
        assert_eq!(id.as_str().len(), 64);
        for rendition in Rendition::all() {
            let key = MediaKey {
                id: id.clone(),
                rendition,
            };
            assert_eq!(MediaKey::parse(&key.to_string()), Some(key));
        }
        assert_eq!(Rendition::all().count(), 4);
        let upper = id.as_str().to_uppercase();
        for bad in [
            format!("{upper}/display.webp"),
            format!("{id}/display.png"),
            format!("{id}/../display.jpg"),
            format!("{id}/display.jpg/x"),
            "../../etc/passwd".to_owned(),
            format!("{id}"),
        ] {
            assert_eq!(MediaKey::parse(&bad), None, "{bad}");
        }
    }
}
