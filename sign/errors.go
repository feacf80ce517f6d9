package sign

import (
	"errors"
	"fmt"
	"io/fs"
)

// Sentinel errors, wrapped by the errors this package returns.
var (
	// ErrSignature: a signature that does not verify under the public key
	// (the message was changed, the signature was changed, or another key
	// signed it), or that is not 64 bytes long.
	ErrSignature = errors.New("signature does not verify")
	// ErrFormat: a key file of an unknown format tag, or one that is not a
	// single JSON document of the format (unknown fields, trailing data,
	// bad base64 or hex).
	ErrFormat = errors.New("unknown or malformed key file")
	// ErrKeySize: a key, seed or commitment secret of the wrong length.
	ErrKeySize = errors.New("wrong key size")
	// ErrMismatch: a key file whose public key or key id does not match its
	// secret key (or, in a public key file, its key id does not match the
	// public key).
	ErrMismatch = errors.New("key does not match")
	// ErrPermissions: a secret key file readable or writable by group or
	// others.
	ErrPermissions = errors.New("secret key file is accessible by group or others")
	// ErrExists: a key file that already exists and was not to be
	// overwritten.
	ErrExists = errors.New("key file already exists")
)

// FileError reports a key file that cannot be used: its path, the field
// at fault (empty when the whole file is) and the cause.
type FileError struct {
	// Path is the file.
	Path string
	// Field is the JSON field at fault, or "".
	Field string
	// Err is the cause; it wraps a sentinel or an *fs.PathError.
	Err error
}

func (e *FileError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("sign: %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("sign: %s: field %q: %v", e.Path, e.Field, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// PermissionError reports a secret key file whose mode lets group or
// others read or write it. It wraps ErrPermissions. [LoadSecret] returns it
// together with the (otherwise valid) key.
type PermissionError struct {
	// Path is the file.
	Path string
	// Mode is its permission bits.
	Mode fs.FileMode
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("sign: %s: mode %04o: %v (chmod 600 %s)", e.Path, uint32(e.Mode.Perm()), ErrPermissions, e.Path)
}

func (e *PermissionError) Unwrap() error { return ErrPermissions }
