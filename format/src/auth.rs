//! The stream's shared-secret handshake: the connector (`stream_token_file=`) and
//! `h5prov collect --token-file` prove to each other that they hold the same token before
//! the connector sends anything about the process (`docs/STREAMING.md`).
//!
//! One text line each way, then one more from the client:
//! 1. client → `h5prov-auth 1 <client nonce, 32 hex>`
//! 2. collector → `<collector nonce, 32 hex> <HMAC-SHA256(token, "h5prov collector" ‖ cn ‖ sn), 64 hex>`
//! 3. client, having checked that proof → `<HMAC-SHA256(token, "h5prov client" ‖ cn ‖ sn), 64 hex>`
//!
//! The collector proves first, so a process that squats the port without the token learns
//! nothing but a nonce. Fresh nonces on both sides make a recorded proof useless on another
//! connection. Only the proofs cross the wire, never the token. This authenticates the ends;
//! it does not encrypt what follows: with TLS ([`crate::tls`]) it runs inside the TLS session.
//!
//! The functions here are pure (no I/O) so both ends share one definition, each doing its
//! own socket I/O (the connector sends with `MSG_NOSIGNAL`, the collector reads with its
//! limits).

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::path::Path;

/// The first line's prefix (protocol version 1).
pub const AUTH_GREETING: &str = "h5prov-auth 1 ";
/// Bytes of each nonce.
pub const NONCE_LEN: usize = 16;
/// Fewest bytes of a token.
pub const MIN_TOKEN: usize = 16;
/// Most bytes of a token.
pub const MAX_TOKEN: usize = 4096;
/// Longest handshake line, newline included.
pub const MAX_AUTH_LINE: usize = 256;

const COLLECTOR: &[u8] = b"h5prov collector";
const CLIENT: &[u8] = b"h5prov client";

/// A nonce.
pub type Nonce = [u8; NONCE_LEN];

/// Reads a token file: its content without the trailing newline, 16 to 4096 visible ASCII
/// characters (it is also an HTTP Bearer token). Refused when the group or others may read
/// it. Errors name the file.
pub fn read_token_file(path: &Path) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::PermissionsExt;
    let name = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("token file {name}: {e}"))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "token file {name}: mode {mode:03o} lets others read it (chmod 600 {name})"
        ));
    }
    if meta.len() > MAX_TOKEN as u64 + 2 {
        return Err(format!("token file {name}: longer than {MAX_TOKEN} bytes"));
    }
    let mut t = std::fs::read(path).map_err(|e| format!("token file {name}: {e}"))?;
    while t.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        t.pop();
    }
    if t.len() < MIN_TOKEN || t.len() > MAX_TOKEN || !t.iter().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "token file {name}: a token is {MIN_TOKEN} to {MAX_TOKEN} visible ASCII characters \
             on one line (e.g. `openssl rand -hex 32`)"
        ));
    }
    Ok(t)
}

/// A fresh random nonce (the kernel's `/dev/urandom`).
pub fn nonce() -> std::io::Result<Nonce> {
    use std::io::Read;
    let mut n = [0u8; NONCE_LEN];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut n)?;
    Ok(n)
}

fn mac(token: &[u8], role: &[u8], cn: &Nonce, sn: &Nonce) -> Hmac<Sha256> {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(token).expect("HMAC takes any key length");
    m.update(role);
    m.update(cn);
    m.update(sn);
    m
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

fn nonce_from(s: &str) -> Option<Nonce> {
    unhex(s)?.try_into().ok()
}

/// Step 1, client: its greeting line (with the newline).
pub fn client_greeting(cn: &Nonce) -> String {
    format!("{AUTH_GREETING}{}\n", hex(cn))
}

/// Step 2, collector: the answer to a greeting line (with the newline) and the collector's
/// nonce, or `None` when the line is not a greeting.
pub fn collector_answer(token: &[u8], greeting: &str, sn: &Nonce) -> Option<(String, Nonce)> {
    let cn = nonce_from(greeting.trim_end().strip_prefix(AUTH_GREETING)?)?;
    let proof = mac(token, COLLECTOR, &cn, sn).finalize().into_bytes();
    Some((format!("{} {}\n", hex(sn), hex(&proof)), cn))
}

/// Step 3, client: checks the collector's answer; the client's proof line (with the
/// newline) when the collector holds the token.
pub fn client_proof(token: &[u8], cn: &Nonce, answer: &str) -> Option<String> {
    let (sn, proof) = answer.trim_end().split_once(' ')?;
    let sn = nonce_from(sn)?;
    mac(token, COLLECTOR, cn, &sn)
        .verify_slice(&unhex(proof)?)
        .ok()?;
    let mine = mac(token, CLIENT, cn, &sn).finalize().into_bytes();
    Some(format!("{}\n", hex(&mine)))
}

/// Step 3, collector: whether the client's proof line shows it holds the token.
pub fn collector_verify(token: &[u8], cn: &Nonce, sn: &Nonce, line: &str) -> bool {
    unhex(line.trim_end()).is_some_and(|p| mac(token, CLIENT, cn, sn).verify_slice(&p).is_ok())
}

/// Whether a presented token (an HTTP `Authorization: Bearer`) is `token`, in time that
/// does not depend on where they differ (compared as HMACs of a fixed message).
pub fn token_matches(token: &[u8], presented: &[u8]) -> bool {
    let want = mac(token, b"bearer", &[0; NONCE_LEN], &[0; NONCE_LEN])
        .finalize()
        .into_bytes();
    mac(presented, b"bearer", &[0; NONCE_LEN], &[0; NONCE_LEN])
        .verify_slice(&want)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ends_with_the_token_agree_and_a_wrong_token_fails_either_way() {
        let (good, bad) = (b"0123456789abcdef0123", b"0123456789abcdef0124");
        let (cn, sn) = ([1u8; NONCE_LEN], [2u8; NONCE_LEN]);
        let g = client_greeting(&cn);
        let (answer, got_cn) = collector_answer(good, &g, &sn).unwrap();
        assert_eq!(got_cn, cn);
        let proof = client_proof(good, &cn, &answer).unwrap();
        assert!(collector_verify(good, &cn, &sn, &proof));
        // A squatter without the token cannot answer; a client without it cannot prove.
        let (fake, _) = collector_answer(bad, &g, &sn).unwrap();
        assert!(client_proof(good, &cn, &fake).is_none());
        let wrong = client_proof(bad, &cn, &collector_answer(bad, &g, &sn).unwrap().0).unwrap();
        assert!(!collector_verify(good, &cn, &sn, &wrong));
        // A proof does not carry over to another nonce.
        assert!(!collector_verify(good, &cn, &[3u8; NONCE_LEN], &proof));
        assert!(collector_answer(good, "{\"v\":1}\n", &sn).is_none());
        assert!(token_matches(good, good) && !token_matches(good, bad));
    }

    #[test]
    fn token_files_readable_by_others_or_malformed_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("h5prov-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t");
        std::fs::write(&f, "0123456789abcdef0123\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = read_token_file(&f).unwrap_err();
        assert!(
            e.contains("640") && e.contains(&f.display().to_string()),
            "{e}"
        );
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_token_file(&f).unwrap(), b"0123456789abcdef0123");
        std::fs::write(&f, "short\n").unwrap();
        assert!(read_token_file(&f).unwrap_err().contains("16 to 4096"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
