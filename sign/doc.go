// Package sign holds a certifier's keys: an Ed25519 signing key pair and a
// separate secret for keyed commitments, their file formats, and the three
// operations built on them — sign, verify, commit. It uses the Go standard
// library only (crypto/ed25519, crypto/hmac, crypto/sha256, crypto/rand);
// nothing here is a home-made construction.
//
// # Signatures
//
// [Secret.Sign] is Ed25519 (RFC 8032, "PureEdDSA" over the whole message;
// Bernstein et al., "High-speed high-security signatures", 2012) and
// [Public.Verify] its check. Ed25519 signatures are deterministic: the same
// key and message give the same 64 bytes, so a signed file is reproducible.
//
// A signature covers bytes, not meaning. Callers must sign a canonical byte
// encoding that every verifier can recompute from what it reads: for a JSON
// record, the output of encoding/json's Marshal of the record with its
// signature field empty (struct fields marshal in declaration order, so the
// encoding is unique), and a verifier must re-marshal what it parsed and
// check the signature over those bytes, never over the bytes it read.
// Packages that sign several kinds of records should include a format or
// type tag in what they sign, so that a signature on one kind is not valid
// as another.
//
// # Commitments
//
// [Secret.Commit] is a keyed commitment to data that must not be testable:
// HMAC-SHA256 (RFC 2104; FIPS 198-1) under the 32-byte commitment secret,
// over
//
//	"unlearn-commit/v1" ‖ uint64_be(len(domain)) ‖ domain ‖ data
//
// and returned in hex. The domain (e.g. "state-before-noise") separates
// uses: the same data committed under two domains gives unrelated values,
// and the length prefix makes (domain, data) → message injective. Unlike a
// plain SHA-256, the commitment cannot be recomputed from candidate data by
// anyone who lacks the secret (HMAC is a PRF when SHA-256's compression
// function is; Bellare 2006), so it is no membership oracle. It is bound to
// the certifier, not hiding against it: only the holder of the secret can
// later open it ([Secret.CheckCommit]). The commitment secret is not derived
// from the signing key; the public key reveals nothing about it.
//
// # Key identifiers
//
// A key id ([Public.KeyID]) is the first 16 bytes of SHA-256 of the 32-byte
// Ed25519 public key, in hex (32 characters): short enough to print, long
// enough that two keys do not collide by accident.
//
// # Files
//
// [Secret.WriteFiles] writes NAME.key (mode 0600: the signing seed, the
// commitment secret and the public key) and NAME.pub (the public key), each
// a small JSON document with a "format" tag ([SecretFormat],
// [PublicFormat]), base64 fields and the key id. Files are written
// atomically and never overwrite an existing file unless asked to.
// [LoadSecret] and [LoadPublic] check the format, the key sizes, that the
// key id and public key match the secret, and (for the secret) that the
// file is not readable by group or others.
//
// # Errors
//
// Data errors are returned as a *[FileError] (a key file: path and field)
// or wrap a sentinel (ErrFormat, ErrKeySize, ErrMismatch, ErrPermissions,
// ErrExists, ErrSignature), for errors.Is and errors.As. [LoadSecret]
// returns a usable key together with a *[PermissionError] when the only
// problem is the file's mode, so a command-line tool can warn instead of
// refusing; see its documentation. Programmer errors (a nil or zero key)
// panic with a "sign: " prefix. The package never logs.
package sign
