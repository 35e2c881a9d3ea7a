// An independent check of WARC files written by provenance, with the npm
// package warcio (webrecorder's reader), not with gowarc.
//
//   npm install --prefix DIR warcio@2.4.11
//   node provenance/testdata/warcio-check.mjs DIR/node_modules/warcio FILE.warc[.gz]...
//
// For every record it checks the WARC/1.1 version line, a <urn:uuid:…>
// record ID, WARC-Date, that Content-Length is the block's length, and
// recomputes the sha256 WARC-Block-Digest; for response and resource records
// the WARC-Payload-Digest; for metadata records that the block is a
// provenance/v1 proof whose digest is the payload digest of the record it
// refers to. It prints one line per record and exits non-zero on any failure.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [warcioDir, ...files] = process.argv.slice(2);
if (!warcioDir || files.length === 0) {
  console.error("usage: warcio-check.mjs WARCIO_DIR FILE...");
  process.exit(2);
}
const { WARCParser } = await import(pathToFileURL(path.join(path.resolve(warcioDir), "dist", "index.js")).href);
const sha256 = (b) => "sha256:" + createHash("sha256").update(b).digest("hex");

let failures = 0;
const fail = (msg) => { failures++; console.log("FAIL " + msg); };

for (const file of files) {
  const payloads = new Map(); // record id → payload digest
  // Pass 1: raw blocks.
  const blocks = [];
  for await (const rec of WARCParser.iterRecords(createReadStream(file), { parseHttp: false })) {
    const id = rec.warcHeader("WARC-Record-ID") ?? "";
    const block = await rec.readFully(false);
    blocks.push({ id, type: rec.warcType, block });
    const where = `${file} ${rec.warcType} ${id}`;
    if (rec.warcHeaders.protocol !== "WARC/1.1") fail(`${where}: version ${rec.warcHeaders.protocol}`);
    if (!/^<urn:uuid:[0-9a-f-]{36}>$/.test(id)) fail(`${where}: record id`);
    if (!rec.warcDate) fail(`${where}: no WARC-Date`);
    if (rec.warcContentLength !== block.length) fail(`${where}: Content-Length ${rec.warcContentLength}, block ${block.length}`);
    if (rec.warcBlockDigest !== sha256(block)) fail(`${where}: block digest ${rec.warcBlockDigest}, computed ${sha256(block)}`);
    console.log(`ok ${where} block ${block.length} bytes, digest matches`);
  }
  // Pass 2: HTTP parsed, payloads.
  for await (const rec of WARCParser.iterRecords(createReadStream(file), { parseHttp: true })) {
    const id = rec.warcHeader("WARC-Record-ID");
    const where = `${file} ${rec.warcType} ${id}`;
    if (rec.warcType === "response" || rec.warcType === "resource") {
      const payload = await rec.readFully(false);
      if (rec.warcPayloadDigest !== sha256(payload)) fail(`${where}: payload digest ${rec.warcPayloadDigest}, computed ${sha256(payload)}`);
      payloads.set(id, rec.warcPayloadDigest);
      const info = rec.getResponseInfo();
      console.log(`ok ${where} payload ${payload.length} bytes, digest matches${info ? ", HTTP " + info.status : ""}`);
    } else if (rec.warcType === "metadata") {
      const proof = JSON.parse(await rec.contentText());
      const ref = rec.warcHeader("WARC-Refers-To");
      if (proof.schema !== "provenance/v1") fail(`${where}: schema ${proof.schema}`);
      if (payloads.get(ref) !== proof.digest) fail(`${where}: proof digest ${proof.digest}, referred payload ${payloads.get(ref)}`);
      console.log(`ok ${where} proof of ${proof.final_url} read at ${proof.read_at}, digest = payload of ${ref}`);
    } else {
      await rec.readFully(false);
    }
  }
}
console.log(failures === 0 ? "warcio-check: all records valid" : `warcio-check: ${failures} failures`);
process.exit(failures === 0 ? 0 : 1);
