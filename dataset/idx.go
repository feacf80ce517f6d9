package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// IDX magic numbers: two zero bytes, the element type (0x08: unsigned
// byte) and the number of dimensions (LeCun et al., "THE MNIST DATABASE of
// handwritten digits", file formats section, http://yann.lecun.com/exdb/mnist/).
const (
	idxUnsignedByte = 0x08
	// maxIDXDim bounds rows, cols and rows·cols of an image, so that a
	// corrupt header cannot make us allocate gigabytes per row (each
	// dimension is checked before the product is formed, which therefore
	// cannot overflow).
	maxIDXDim = 1 << 24
	// idxChunk is the first size of the pixel buffer: it grows as the
	// first image's bytes arrive (see readImage).
	idxChunk = 64 << 10
)

// idxSource reads an IDX image file (u8, 3-D: n × rows × cols) and its
// label file (u8, 1-D: n) in lock step.
type idxSource struct {
	imgPath, labPath   string
	img, lab           io.Reader
	closeImg, closeLab func() error
	n, d               int
	rows, cols         int // the image shape: rows·cols = d
	i                  int // images read
	imgOff, labOff     int64
	scale              float64
	lbl                labeler
	pix                []byte
	st                 Stats
}

// labelsPath returns the label file of an IDX image file.
func labelsPath(images string, o Options) (string, error) {
	if o.Labels != "" {
		return o.Labels, nil
	}
	if p := strings.Replace(images, "images-idx3", "labels-idx1", 1); p != images {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		return "", optErr("Labels", "the label file of %s is not %s: give it", images, p)
	}
	return "", optErr("Labels", "required for %s: the IDX label file", images)
}

func openIDX(path string, o Options) (*idxSource, error) {
	lp := ""
	if !o.Unlabeled {
		var err error
		if lp, err = labelsPath(path, o); err != nil {
			return nil, err
		}
	}
	s := &idxSource{imgPath: path, labPath: lp, scale: o.Scale, lbl: newLabeler(o)}
	if s.scale == 0 {
		s.scale = DefaultIDXScale
	}
	var err error
	if s.img, s.closeImg, err = openFile(path); err != nil {
		return nil, err
	}
	s.closeLab = func() error { return nil }
	if lp != "" {
		if s.lab, s.closeLab, err = openFile(lp); err != nil {
			s.closeImg()
			return nil, err
		}
	}
	dims, err := idxHeader(s.img, path, 3)
	if err == nil && lp != "" {
		var ldims []int
		if ldims, err = idxHeader(s.lab, lp, 1); err == nil && ldims[0] != dims[0] {
			err = &PosError{File: lp, Offset: 4, Err: fmt.Errorf("%d labels for the %d images of %s: %w", ldims[0], dims[0], path, ErrSyntax)}
		}
	}
	if err == nil && (dims[1] > maxIDXDim || dims[2] > maxIDXDim || dims[1]*dims[2] > maxIDXDim) {
		err = &PosError{File: path, Offset: 8, Err: fmt.Errorf("images of %d×%d pixels exceed %d: %w", dims[1], dims[2], maxIDXDim, ErrSyntax)}
	}
	if err == nil && dims[1]*dims[2] == 0 {
		err = &PosError{File: path, Offset: 8, Err: fmt.Errorf("images of %d×%d pixels: %w", dims[1], dims[2], ErrSyntax)}
	}
	if err != nil {
		s.close()
		return nil, err
	}
	s.n, s.d = dims[0], dims[1]*dims[2]
	s.rows, s.cols = dims[1], dims[2]
	s.imgOff, s.labOff = 16, 8
	// The pixel buffer is allocated as the first image arrives, never from
	// the header's word alone (readImage).
	return s, nil
}

// idxHeader reads and checks the magic number and the dimensions of an
// unsigned-byte IDX file with ndim dimensions.
func idxHeader(r io.Reader, path string, ndim int) ([]int, error) {
	hdr := make([]byte, 4+4*ndim)
	if n, err := io.ReadFull(r, hdr); err != nil {
		return nil, &PosError{File: path, Offset: int64(n), Err: fmt.Errorf("truncated IDX header (%d of %d bytes): %w", n, len(hdr), ErrSyntax)}
	}
	switch {
	case hdr[0] != 0 || hdr[1] != 0:
		return nil, &PosError{File: path, Offset: 0, Err: fmt.Errorf("magic number %02x%02x%02x%02x is not IDX (want 0000 then type and dimensions): %w", hdr[0], hdr[1], hdr[2], hdr[3], ErrSyntax)}
	case hdr[2] != idxUnsignedByte:
		return nil, &PosError{File: path, Offset: 2, Err: fmt.Errorf("element type 0x%02x: only unsigned bytes (0x08) are supported: %w", hdr[2], ErrSyntax)}
	case int(hdr[3]) != ndim:
		what := "a label file"
		if ndim == 3 {
			what = "an image file"
		}
		return nil, &PosError{File: path, Offset: 3, Err: fmt.Errorf("%d dimensions, want %d for %s: %w", hdr[3], ndim, what, ErrSyntax)}
	}
	dims := make([]int, ndim)
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(hdr[4+4*i:]))
	}
	return dims, nil
}

func (s *idxSource) dim() int     { return s.d }
func (s *idxSource) stats() Stats { return s.st }
func (s *idxSource) close() error {
	err := s.closeImg()
	if err2 := s.closeLab(); err == nil {
		err = err2
	}
	return err
}

func (s *idxSource) next() (row, error) {
	for {
		if s.i == s.n {
			// Both files must end here.
			var one [1]byte
			if n, _ := s.img.Read(one[:]); n > 0 {
				return row{}, &PosError{File: s.imgPath, Offset: s.imgOff, Err: fmt.Errorf("data after the %d images the header declares: %w", s.n, ErrSyntax)}
			}
			if s.lab == nil {
				return row{}, io.EOF
			}
			if n, _ := s.lab.Read(one[:]); n > 0 {
				return row{}, &PosError{File: s.labPath, Offset: s.labOff, Err: fmt.Errorf("data after the %d labels the header declares: %w", s.n, ErrSyntax)}
			}
			return row{}, io.EOF
		}
		var lb [1]byte
		if s.lab != nil {
			if _, err := io.ReadFull(s.lab, lb[:]); err != nil {
				return row{}, &PosError{File: s.labPath, Offset: s.labOff, Err: truncated(err, "label", s.i+1, s.n)}
			}
		}
		if n, err := s.readImage(); err != nil {
			return row{}, &PosError{File: s.imgPath, Offset: s.imgOff + int64(n), Err: truncated(err, "image", s.i+1, s.n)}
		}
		off := s.labOff
		s.i++
		s.st.Rows++
		s.labOff++
		s.imgOff += int64(s.d)
		y, keep, err := s.lbl.label(strconv.Itoa(int(lb[0])))
		if err != nil {
			return row{}, &PosError{File: s.labPath, Offset: off, Err: err}
		}
		if !keep {
			s.st.Skipped++
			continue
		}
		x := make([]float64, s.d)
		for j, p := range s.pix {
			x[j] = float64(p)
		}
		scalePixels(x, s.scale)
		return row{id: int64(s.i), x: x, y: y}, nil
	}
}

// readImage reads the next image into s.pix. The buffer reaches its full
// size d only as the first image's bytes arrive (doubling from idxChunk),
// so a header that declares more pixels than the file holds costs at most
// twice what the file does hold: every allocation of the reader is bounded
// by the input it has read. It returns the number of bytes read.
func (s *idxSource) readImage() (int, error) {
	if len(s.pix) == s.d {
		return io.ReadFull(s.img, s.pix)
	}
	for len(s.pix) < s.d {
		n0 := len(s.pix)
		grow := min(s.d-n0, max(n0, idxChunk))
		s.pix = slices.Grow(s.pix, grow)[:n0+grow]
		n, err := io.ReadFull(s.img, s.pix[n0:])
		if err != nil {
			s.pix = s.pix[:n0+n]
			return n0 + n, err
		}
	}
	return s.d, nil
}

func truncated(err error, what string, k, n int) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("file ends inside %s %d of %d: %w", what, k, n, ErrSyntax)
	}
	return fmt.Errorf("read %s %d: %w", what, k, err)
}
