import Foundation
import Testing
@testable import MapcKit
@testable import MapcFoundation
@testable import MapcModel
@testable import MapcStore
@testable import MapcMigration
@testable import MapcTooling
import MapcExamples

@Suite("Importing Xcode mapping models", .enabled(if: Corpus.isAvailable, Corpus.skipReason))
struct CoreDataMappingImportTests {
    /// The imported versions of the data model in the same corpus project as a mapping model.
    private func catalog(for mappingModel: String) throws -> SchemaCatalog {
        let project = Corpus.root.appendingPathComponent(String(mappingModel.dropFirst(Corpus.root.path.count + 1).split(separator: "/")[0]))
        let model = try #require(Corpus.models.first { $0.hasPrefix(project.path + "/") })
        return SchemaCatalog(schemas: try XcodeModelImporter.importModel(at: model).schemas)
    }

    /// Every mapping model imports, reads back, and checks against its versions; what is left is
    /// only the custom policies it names, which an app ports (the Moody one is ported).
    @Test func everyMappingModelOfTheCorpusImportsAndChecks() throws {
        let paths = Corpus.mappingModels
        #expect(paths.count >= 15)
        let policies = PolicyRegistry()
        registerMoodyPolicies(in: policies)
        for path in paths {
            let catalog = try catalog(for: path)
            let imported = try XcodeMappingImporter.importMapping(at: path, schemas: catalog)
            var checker = MappingChecker(mapping: imported.mapping, policies: policies)
            let errors = checker.check(source: imported.source, destination: imported.destination).filter { $0.severity == .error }
            let unported = Set(imported.mapping.entityMappings.compactMap(\.policy)).subtracting(policies.names)
            #expect(errors.allSatisfy { $0.message.hasPrefix("unknown policy") }, "\(path): \(errors)")
            #expect(errors.count == imported.mapping.entityMappings.filter { $0.policy.map(unported.contains) == true }.count, "\(path)")
        }
    }

    @Test func entityMappingsKeepXcodesOrderNamesAndKinds() throws {
        let path = Corpus.path("moody/Moody 5-Moody 6.xcmappingmodel")
        let imported = try XcodeMappingImporter.importMapping(at: path, schemas: try catalog(for: path))
        #expect(imported.source.version == "Moody 5" && imported.destination.version == "Moody 6")
        #expect(imported.fileName == "mapping_Moody 5_to_Moody 6.yaml")
        #expect(imported.mapping.entityMappings.map(\.name) == ["ToContinent", "CountryToCountry", "MoodToMood"])
        #expect(imported.mapping.entityMappings.map(\.type) == [.add, .custom, .transform], "a mapping with a policy reads back as custom")
        #expect(imported.mapping.entityMappings[1].policy == "Country5ToCountry6Policy")
        #expect(imported.warnings.contains { $0.message.contains("port it to MapcKit's EntityMigrationPolicy and register it as 'Country5ToCountry6Policy'") })
    }

    @Test func relationshipMappingsBecomeTheExpressionsXcodeCompiles() throws {
        let path = Corpus.path("moody/Moody 2-Moody 3.xcmappingmodel")
        let imported = try XcodeMappingImporter.importMapping(at: path, schemas: try catalog(for: path))
        let continent = try #require(imported.mapping.entityMappings.first { $0.name == "ContinentToContinent" })
        #expect(continent.relationshipMapping(named: "moods")?.expression.source.text
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "MoodToMood", $source.countries.@distinctUnionOfSets.moods)"#)
        #expect(continent.relationshipMapping(named: "countries")?.expression.source.text
                == #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "countries", $source.countries)"#)
        #expect(continent.attributeMapping(named: "updatedAt")?.expression.source.text == "$source.updatedAt")
    }

    /// Value expressions are archived NSExpressions: policy functions with arguments, key paths,
    /// constants; each decodes into text that parses.
    @Test func archivedValueExpressionsDecode() throws {
        let path = Corpus.path("readinglist/Migrations/BookMapping_12_13.xcmappingmodel")
        let imported = try XcodeMappingImporter.importMapping(at: path, schemas: try catalog(for: path))
        let texts = imported.mapping.entityMappings.flatMap { $0.attributes + $0.relationships }.map(\.expression.source.text)
        #expect(texts.contains(#"FUNCTION($entityPolicy, "googleBooksIdForGoogleBooksId:manager:", $source.googleBooksId, $manager)"#), "\(texts)")
        #expect(texts.contains(#"FUNCTION($entityPolicy, "currentPageForCurrentPage:readState:", $source.currentPage, $source.readState)"#), "\(texts)")
    }

    @Test func aMappingMadeAgainstAnEarlierStateOfAVersionIsImportedForItWithTheDifferences() throws {
        let path = Corpus.path("readinglist/Migrations/BookMapping_16_17.xcmappingmodel")
        let imported = try XcodeMappingImporter.importMapping(at: path, schemas: try catalog(for: path))
        #expect(imported.destination.version == "books_17")
        #expect(imported.warnings.contains { $0.message.contains("is not exactly version books_17") && $0.message.contains("sort: int32, optional in the embedded model, int32 in books_17") })
    }
}
