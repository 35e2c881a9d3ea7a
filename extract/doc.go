// Package extract turns a page (or a CMS API's JSON) into an [Article]: the
// body as ordered blocks and the metadata the publisher stated, each field
// copied from where the publisher put it and none ever completed. It never
// fetches anything.
package extract
