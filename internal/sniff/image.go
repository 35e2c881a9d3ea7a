package sniff

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/webp"
)

// Format is an image format [Image] accepts. The zero Format is Unknown.
type Format uint8

// The formats, Unknown first.
const (
	Unknown Format = iota // not one of the four
	JPEG
	PNG
	WebP
	GIF
)

var formatNames = [...]string{Unknown: "unknown", JPEG: "jpeg", PNG: "png", WebP: "webp", GIF: "gif"}

// String returns the format's short name: "jpeg", "png", "webp", "gif" or
// "unknown".
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("format(%d)", int(f))
}

// MediaType returns the format's media type, such as "image/jpeg"; "" for
// Unknown.
func (f Format) MediaType() string {
	if f == Unknown || int(f) >= len(formatNames) {
		return ""
	}
	return "image/" + formatNames[f]
}

// Errors [Image] returns, matchable with errors.Is.
var (
	// ErrNotImage: the bytes do not start with the magic number of JPEG,
	// PNG, WebP or GIF (an HTML page labelled image/jpeg, say).
	ErrNotImage = errors.New("sniff: not a JPEG, PNG, WebP or GIF")
	// ErrCorrupt: the magic number is there but the header does not decode,
	// or states no width or height.
	ErrCorrupt = errors.New("sniff: corrupt image header")
)

// Magic returns the format whose magic number b starts with, or Unknown. It
// reads at most the first 12 bytes.
func Magic(b []byte) Format {
	switch {
	case len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF:
		return JPEG
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return WebP
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return GIF
	}
	return Unknown
}

// Config is what [Image] found: the format and the dimensions in pixels.
type Config struct {
	Format        Format
	Width, Height int
}

// Image decides b's format from its magic number and reads its dimensions
// with that format's header decoder. It returns an error matching
// ErrNotImage when b is none of the four formats, ErrCorrupt when its header
// does not decode or gives a zero dimension. It is safe for concurrent use
// and keeps nothing of b.
func Image(b []byte) (Config, error) {
	f := Magic(b)
	var decodeConfig func(io.Reader) (image.Config, error)
	switch f {
	case JPEG:
		decodeConfig = jpeg.DecodeConfig
	case PNG:
		decodeConfig = png.DecodeConfig
	case WebP:
		decodeConfig = webp.DecodeConfig
	case GIF:
		decodeConfig = gif.DecodeConfig
	default:
		return Config{}, ErrNotImage
	}
	cfg, err := decodeConfig(bytes.NewReader(b))
	if err != nil {
		return Config{Format: f}, fmt.Errorf("%w: %s: %v", ErrCorrupt, f, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Config{Format: f}, fmt.Errorf("%w: %s: %d×%d pixels", ErrCorrupt, f, cfg.Width, cfg.Height)
	}
	return Config{Format: f, Width: cfg.Width, Height: cfg.Height}, nil
}
