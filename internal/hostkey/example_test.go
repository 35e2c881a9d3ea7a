package hostkey_test

import (
	"fmt"

	"github.com/politefetch/politefetch/internal/hostkey"
)

func Example() {
	for _, h := range []string{"Example.COM:443", "example.com.", "example.com", "Bücher.example"} {
		key, err := hostkey.Normalize(h)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(key)
	}
	fmt.Println(hostkey.Site("news.example.co.uk"))
	// Output:
	// example.com
	// example.com
	// example.com
	// xn--bcher-kva.example
	// example.co.uk
}
