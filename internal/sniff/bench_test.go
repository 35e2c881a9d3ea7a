package sniff

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkImage judges each testdata image: magic number, then the
// format's header decoder.
func BenchmarkImage(b *testing.B) {
	for _, name := range []string{"4x3.jpg", "4x3.png", "4x3.gif", "1x1.webp", "html-as-jpeg.jpg"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = Image(data)
			}
		})
	}
}
