"""What the protocol packages share: the decoder surface and its JSON/frame helpers
(`decoding`, `inline_media`), the encoder surface and request checks (`encoding`, `options`;
data URLs and media types are `modelstream.media`), and the providers more than one protocol
reaches (`providers`)."""
