package politetest

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// webp1x1 is a valid 1×1 lossless WebP file (RIFF, "WEBP", one VP8L chunk).
const webp1x1 = "RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00" +
	"\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"

// fakeImage is what the fake image serves: an HTML page, labelled image/jpeg.
const fakeImage = "<!DOCTYPE html>\n<html><head><title>Image not found</title></head>" +
	"<body><p>This is not an image.</p></body></html>\n"

// imageSet holds the share images' bytes, made once per web.
type imageSet struct {
	once           sync.Once
	jpg, png, gifs []byte
}

func (s *imageSet) get() *imageSet {
	s.once.Do(func() {
		img := image.NewRGBA(image.Rect(0, 0, 16, 9))
		for y := 0; y < 9; y++ {
			for x := 0; x < 16; x++ {
				img.Set(x, y, color.RGBA{uint8(x * 16), uint8(y * 28), 128, 255})
			}
		}
		var b bytes.Buffer
		jpeg.Encode(&b, img, &jpeg.Options{Quality: 80})
		s.jpg = bytes.Clone(b.Bytes())
		b.Reset()
		png.Encode(&b, img)
		s.png = bytes.Clone(b.Bytes())
		b.Reset()
		gif.Encode(&b, img, &gif.Options{NumColors: 16})
		s.gifs = bytes.Clone(b.Bytes())
	})
	return s
}

// serveImage answers /images/<name>: a name starting with "fake" gets HTML
// bytes labelled image/jpeg; otherwise the extension (.jpg/.jpeg, .png,
// .webp, .gif) picks real image bytes. Anything else is a 404.
func (w *Web) serveImage(rw http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/images/")
	set := w.images.get()
	var body []byte
	ctype := imageType(name)
	switch {
	case strings.HasPrefix(name, "fake"):
		body, ctype = []byte(fakeImage), "image/jpeg"
	case strings.HasSuffix(name, ".jpg"), strings.HasSuffix(name, ".jpeg"):
		body = set.jpg
	case strings.HasSuffix(name, ".png"):
		body = set.png
	case strings.HasSuffix(name, ".gif"):
		body = set.gifs
	case strings.HasSuffix(name, ".webp"):
		body = []byte(webp1x1)
	default:
		http.Error(rw, "404 page not found", http.StatusNotFound)
		return
	}
	h := rw.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("ETag", etagOf(body))
	h.Set("Cache-Control", "public, max-age=86400")
	rw.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		rw.Write(body)
	}
}
