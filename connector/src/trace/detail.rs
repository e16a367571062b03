//! [`Detail`]: the bounded, allocation-free text of `level=element` selection detail.

/// A bounded, allocation-free text buffer for `level=element` selection detail.
pub struct Detail {
    buf: [u8; 256],
    len: usize,
}

impl Default for Detail {
    fn default() -> Self {
        Detail {
            buf: [0; 256],
            len: 0,
        }
    }
}

impl Detail {
    /// The text so far.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl std::fmt::Write for Detail {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        // Content is limited to 253 bytes so "..." always fits when it is cut.
        const LIMIT: usize = 253;
        if self.len > LIMIT {
            return Err(std::fmt::Error);
        }
        let room = LIMIT - self.len;
        if s.len() <= room {
            self.buf[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
            self.len += s.len();
            return Ok(());
        }
        let mut cut = room;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        self.buf[self.len..self.len + cut].copy_from_slice(&s.as_bytes()[..cut]);
        self.len += cut;
        self.buf[self.len..self.len + 3].copy_from_slice(b"...");
        self.len += 3;
        Err(std::fmt::Error)
    }
}
