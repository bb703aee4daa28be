import Foundation

/// Reads an image's pixel size from its PNG or JPEG header, without decoding it: what the
/// UnCloudNotes policy needs on Linux, where UIImage does not exist. Bounded: it looks at
/// most at the first megabyte and never trusts a length field past the data.
public enum ImageHeader {
    /// Width and height in pixels, or nil when the data is neither a PNG nor a JPEG it can read.
    public static func size(of data: Data) -> (width: Int, height: Int)? {
        let bytes = [UInt8](data.prefix(1 << 20))
        return png(bytes) ?? jpeg(bytes)
    }

    static func png(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        // Signature, then the IHDR chunk: length (4), "IHDR" (4), width (4), height (4).
        guard bytes.count >= 24, Array(bytes[0..<8]) == signature, bytes[12...15].elementsEqual("IHDR".utf8) else { return nil }
        let width = bytes[16...19].reduce(0) { $0 << 8 | Int($1) }
        let height = bytes[20...23].reduce(0) { $0 << 8 | Int($1) }
        return (width, height)
    }

    static func jpeg(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var index = 2
        while index + 3 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF { index += 1; continue }                    // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { index += 2; continue }  // no length
            if marker == 0xD9 || marker == 0xDA { return nil }           // end, or scan data without a frame header
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2 else { return nil }
            // Start-of-frame markers carry the size: C0–CF except C4 (Huffman), C8 (reserved), CC (arithmetic).
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard index + 8 < bytes.count else { return nil }
                let height = Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])
                let width = Int(bytes[index + 7]) << 8 | Int(bytes[index + 8])
                return (width, height)
            }
            index += 2 + length
        }
        return nil
    }
}
