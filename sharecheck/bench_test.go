package sharecheck_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/politefetch/politefetch/sharecheck"
)

// BenchmarkCheckCached is a story naming an image already checked: the
// answer from the cache, no request.
func BenchmarkCheckCached(b *testing.B) {
	web, chk := benchBed(b)
	img := sharecheck.Image{URL: web("/images/1.jpg"), Page: page, Credit: "Photo"}
	if res := chk.Check(context.Background(), img); !res.Usable() {
		b.Fatal(res.Err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		chk.Check(context.Background(), img)
	}
}

// BenchmarkCheckCachedParallel is the same from every core, over 100
// images already checked.
func BenchmarkCheckCachedParallel(b *testing.B) {
	web, chk := benchBed(b)
	imgs := make([]sharecheck.Image, 100)
	for i := range imgs {
		imgs[i] = sharecheck.Image{URL: web(fmt.Sprintf("/images/%d.png", i)), Page: page}
		chk.Check(context.Background(), imgs[i])
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			chk.Check(context.Background(), imgs[i%len(imgs)])
			i++
		}
	})
}
