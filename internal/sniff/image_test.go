package sniff

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestImage_Testdata(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file          string
		format        Format
		width, height int
		err           error
	}{
		{"4x3.jpg", JPEG, 4, 3, nil},
		{"4x3.png", PNG, 4, 3, nil},
		{"4x3.gif", GIF, 4, 3, nil},
		{"1x1.webp", WebP, 1, 1, nil},
		{"html-as-jpeg.jpg", Unknown, 0, 0, ErrNotImage},
		{"truncated.png", PNG, 0, 0, ErrCorrupt},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := Image(b)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if cfg.Format != tc.format || cfg.Width != tc.width || cfg.Height != tc.height {
				t.Errorf("got %v %d×%d, want %v %d×%d", cfg.Format, cfg.Width, cfg.Height, tc.format, tc.width, tc.height)
			}
		})
	}
}

func TestMagic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Format
	}{
		{"", Unknown},
		{"\xff\xd8", Unknown},
		{"\xff\xd8\xff\xe0", JPEG},
		{"\x89PNG\r\n\x1a\n", PNG},
		{"\x89PNG\r\n", Unknown},
		{"RIFF\x00\x00\x00\x00WEBP", WebP},
		{"RIFF\x00\x00\x00\x00WAVE", Unknown},
		{"GIF87a", GIF},
		{"GIF89a", GIF},
		{"GIF90a", Unknown},
		{"BM\x00\x00", Unknown},               // BMP: not one of the four
		{"<svg xmlns=", Unknown},              // SVG: not one of the four
		{"\x00\x00\x00\x18ftypavif", Unknown}, // AVIF: not one of the four
		{"<!DOCTYPE html><html>", Unknown},
	} {
		if got := Magic([]byte(tc.in)); got != tc.want {
			t.Errorf("Magic(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestFormat_Names(t *testing.T) {
	t.Parallel()
	for f, want := range map[Format][2]string{
		Unknown: {"unknown", ""}, JPEG: {"jpeg", "image/jpeg"}, PNG: {"png", "image/png"},
		WebP: {"webp", "image/webp"}, GIF: {"gif", "image/gif"}, Format(99): {"format(99)", ""},
	} {
		if f.String() != want[0] || f.MediaType() != want[1] {
			t.Errorf("%d: %q %q, want %q %q", f, f.String(), f.MediaType(), want[0], want[1])
		}
	}
}

// FuzzImage: any bytes give a known format with positive dimensions, or an
// error matching one of the two sentinels; never a panic.
func FuzzImage(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.*"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := Image(b)
		switch {
		case err == nil:
			if cfg.Format == Unknown || cfg.Width <= 0 || cfg.Height <= 0 {
				t.Fatalf("accepted %+v", cfg)
			}
		case errors.Is(err, ErrNotImage):
			if Magic(b) != Unknown {
				t.Fatalf("ErrNotImage for a %v magic number", Magic(b))
			}
		case !errors.Is(err, ErrCorrupt):
			t.Fatalf("unexpected error %v", err)
		}
	})
}
