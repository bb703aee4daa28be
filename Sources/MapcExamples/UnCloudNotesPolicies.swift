import MapcKit

/// The UnCloudNotes tutorial's v3 to v4 policy, ported from NSEntityMigrationPolicy: each
/// Attachment becomes an ImageAttachment whose caption is the first 80 characters of its note's
/// body and whose width and height are read from the image bytes.
public final class AttachmentToImageAttachmentMigrationPolicyV3toV4: EntityMigrationPolicy {
    /// The attributes this policy sets, so `mapc check` does not ask for expressions.
    public override class var providedAttributes: Set<String> { ["caption", "width", "height"] }
    /// `createRelationships` is the default (the mapping's `note` expression), so mapc sets every
    /// attachment's note with SQL instead of calling it per attachment.
    public override class var keepsDefaultRelationships: Bool { true }

    public override func createDestinationInstances(for source: SourceObject, mapping: EntityMapping, manager: MigrationManager) throws {
        // The mapping's own expressions (dateCreated, image) first, as the tutorial's traversePropertyMappings does.
        var attachment = try manager.makeDestination(for: source, mapping: mapping)
        var width = 0.0, height = 0.0
        if case .binary(let image) = source["image"], let size = ImageHeader.size(of: image) {
            width = Double(size.width)
            height = Double(size.height)
        }
        attachment["width"] = .double(width)
        attachment["height"] = .double(height)
        // The tutorial's body.substring(to: 80) raises on short bodies; prefix is safe. A body
        // another writer stored as bytes that are not UTF-8 text keeps its first 80 bytes.
        switch try source.value(forKeyPath: "note.body") {
        case .scalar(.string(let body)): attachment["caption"] = .string(String(body.prefix(80)))
        case .scalar(.nonUTF8Text(let bytes)): attachment["caption"] = .nonUTF8Text(bytes.prefix(80))
        default: attachment["caption"] = .string("")
        }
        try manager.insert(attachment, associatedWith: source, mapping: mapping)
    }
}

/// Registers the UnCloudNotes policies under the names the shipped mapping files use.
public func registerUnCloudNotesPolicies(in registry: PolicyRegistry = .shared) {
    registry.register(AttachmentToImageAttachmentMigrationPolicyV3toV4.self, as: "UnCloudNotes.AttachmentToImageAttachmentMigrationPolicyV3toV4")
}
