package sniff_test

import (
	"fmt"

	"github.com/politefetch/politefetch/internal/sniff"
)

func ExampleImage() {
	// An HTML page sent as image/jpeg is not an image, whatever its header says.
	_, err := sniff.Image([]byte("<!DOCTYPE html><html><body>Not found</body></html>"))
	fmt.Println(err)
	// The smallest lossless WebP: one pixel.
	cfg, err := sniff.Image([]byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"))
	fmt.Println(cfg.Format.MediaType(), cfg.Width, cfg.Height, err)
	// Output:
	// sniff: not a JPEG, PNG, WebP or GIF
	// image/webp 1 1 <nil>
}
