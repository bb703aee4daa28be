import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling

/// Malformed XML in an Xcode file is reported at a place inside the file, with a reason in words.
@Suite("Reading Xcode's XML")
struct XMLTreeTests {
    private func problem(_ text: String) -> String {
        do {
            _ = try XMLTree.parse(Data(text.utf8), path: "contents")
            return "parsed"
        } catch {
            return "\(error)"
        }
    }

    @Test func anUnclosedElementIsReportedInsideTheFileInWords() {
        let text = "<?xml version=\"1.0\"?>\n<model>\n    <entity name=\"A\">\n        <attribute name=\"x\"/>\n"
        #expect(text.split(separator: "\n")[3].count == 29)
        let message = problem(text)
        // Four lines and a final newline: the end of the document is the end of line 4, where an
        // editor shows it, not the empty fifth line.
        #expect(message.contains("contents:4:30:"), "\(message)")
        #expect(message.contains("an element is left open"), "\(message)")
        #expect(!message.contains("NSXMLParserErrorDomain"), "\(message)")
    }

    @Test func mismatchedTagsAreReportedInWords() {
        let message = problem("<model>\n  <entity></model>\n")
        #expect(message.contains("contents:2:"), "\(message)")
        #expect(message.contains("an element is left open") || message.contains("an end tag does not match"), "\(message)")
        let swapped = problem("<model></entity>")
        #expect(swapped.contains("an end tag does not match its start tag"), "\(swapped)")
        #expect(!message.contains("NSXMLParserErrorDomain"), "\(message)")
    }

    /// The parser puts an early end on the line after the file's last newline; the report stays on
    /// a line the file has.
    @Test func anEarlyEndIsReportedOnTheFilesLastLine() {
        let message = problem("<model>\n  <entity>\n    <a/>\n  </entity>\n\n")
        #expect(message.contains("contents:5:1:"), "\(message)")
    }

    /// A file with Windows line ends is counted in lines all the same.
    @Test func aCRLFFileIsCountedInLines() {
        let message = problem("<model>\r\n  <entity>\r\n    <a/>\r\n  </entity>\r\n\r\n")
        #expect(message.contains("contents:5:1:") || message.contains("contents:4:"), "\(message)")
    }

    /// A byte that is not UTF-8 anywhere (an element or attribute name, a processing instruction's
    /// target, where Foundation's parser stopped the process) is an error at its line and column.
    @Test func aByteThatIsNotUTF8IsAnErrorAtItsPlaceWhereverItIs() throws {
        for (text, line, column) in [("<model>\n  <enti\u{FF}ty/></model>", 2, 8), ("<model a\u{FE}b=\"1\"/>", 1, 9), ("<?x\u{FF}m?><model/>", 1, 4), ("<model>é\u{C3}</model>", 1, 9)] {
            // The marked characters stand for single bytes: 0xFF, 0xFE and a lone 0xC3.
            var bytes = [UInt8]()
            for scalar in text.unicodeScalars {
                if [0xFF, 0xFE, 0xC3].contains(scalar.value) { bytes.append(UInt8(scalar.value)) } else { bytes += Array(String(scalar).utf8) }
            }
            do {
                _ = try XMLTree.parse(Data(bytes), path: "contents")
                Issue.record("\(text) parsed")
            } catch {
                #expect("\(error)".contains("contents:\(line):\(column): error: malformed XML: byte 0x") && "\(error)".contains("is not UTF-8"), "\(error)")
            }
        }
    }

    @Test func entitiesAreExplainedNotNumbered() {
        let message = problem("<?xml version=\"1.0\"?>\n<!DOCTYPE m [<!ENTITY % p SYSTEM \"file:///etc/passwd\"> %p;]>\n<model>&undeclared;</model>\n")
        #expect(!message.contains("libxml2 error"), "\(message)")
    }
}
