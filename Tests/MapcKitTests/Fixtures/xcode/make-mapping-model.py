#!/usr/bin/env python3
"""Writes Kitchen 1-Kitchen 2.xcmappingmodel/xcmapping.xml, a mapping model authored for mapc's
tests in the format Xcode saves (a Core Data XML store of XDDev objects), with value expressions
archived as NSKeyedArchiver binary property lists, as Xcode archives NSExpression."""
import base64, os, plistlib

def archive(build):
    objects = ["$null"]
    classes = {}
    def cls(name, chain):
        if name not in classes:
            objects.append({"$classname": name, "$classes": chain})
            classes[name] = plistlib.UID(len(objects) - 1)
        return classes[name]
    def add(value):
        objects.append(value)
        return plistlib.UID(len(objects) - 1)
    def variable(name):
        return add({"NSExpressionType": 2, "NSVariable": add(name), "$class": cls("NSVariableExpression", ["NSVariableExpression", "NSExpression", "NSObject"])})
    def constant(value):
        return add({"NSExpressionType": 0, "NSConstantValue": add(value), "$class": cls("NSConstantValueExpression", ["NSConstantValueExpression", "NSExpression", "NSObject"])})
    def array(items):
        return add({"NS.objects": items, "$class": cls("NSMutableArray", ["NSMutableArray", "NSArray", "NSObject"])})
    def keypath(operand, path):
        spec = add({"NSExpressionType": 10, "NSKeyPath": add(path), "$class": cls("NSKeyPathSpecifierExpression", ["NSKeyPathSpecifierExpression", "NSExpression", "NSObject"])})
        return add({"NSExpressionType": 4, "NSOperand": operand, "NSSelectorName": add("valueForKeyPath:"), "NSArguments": array([spec]),
                    "$class": cls("NSKeyPathExpression", ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"])})
    def function(operand, selector, arguments):
        return add({"NSExpressionType": 4, "NSOperand": operand, "NSSelectorName": add(selector), "NSArguments": array(arguments),
                    "$class": cls("NSFunctionExpression", ["NSFunctionExpression", "NSExpression", "NSObject"])})
    root = build(variable, constant, keypath, function)
    # The root must be object 1, as NSKeyedArchiver writes it: move it there.
    data = {"$archiver": "NSKeyedArchiver", "$version": 100000, "$top": {"root": root}, "$objects": objects}
    return base64.b64encode(plistlib.dumps(data, fmt=plistlib.FMT_BINARY)).decode()

shout = archive(lambda v, c, k, f: f(v("entityPolicy"), "shout:", [k(v("source"), "name")]))
rank = archive(lambda v, c, k, f: c(7))

def attribute(name, kind, value):
    return f'        <attribute name="{name}" type="{kind}">{value}</attribute>\n'

def relationship(name, destination, ids, to_one=False):
    kind = "1/1" if to_one else "0/0"
    refs = f' idrefs="{ids}"' if ids else ""
    return f'        <relationship name="{name}" type="{kind}" destination="{destination}"{refs}></relationship>\n'

objects = []
def obj(kind, ident, body):
    objects.append(f'    <object type="{kind}" id="{ident}">\n{body}    </object>\n')

def entity_mapping(ident, number, source, destination, attrs, rels, model="z101"):
    body = ""
    if source: body += attribute("sourcename", "string", source)
    body += attribute("mappingtypename", "string", "Undefined")
    body += attribute("mappingnumber", "int16", number)
    if destination: body += attribute("destinationname", "string", destination)
    body += attribute("autogenerateexpression", "bool", 1)
    return body, attrs, rels

def property_mapping(kind, ident, name, owner, extra=""):
    obj(kind, ident, attribute("name", "string", name) + extra + relationship("entitymapping", "XDDEVENTITYMAPPING", owner, True))

obj("XDDEVMAPPINGMODEL", "z101",
    attribute("sourcemodelpath", "string", "Kitchen/Kitchen.xcdatamodeld/Kitchen.xcdatamodel")
    + attribute("destinationmodelpath", "string", "Kitchen/Kitchen.xcdatamodeld/Kitchen 2.xcdatamodel")
    + relationship("entitymappings", "XDDEVENTITYMAPPING", "z130 z110 z120 z140"))
# ItemToItem (first by number), with a filter and a policy function.
item_attributes = ["amount", "colors", "count", "created", "flag", "identifier", "link", "name", "photo", "ratio", "small", "weight"]
ids = []
for i, name in enumerate(item_attributes + ["shout"]):
    ident = f"z{200 + i}"
    ids.append(ident)
    extra = attribute("valueexpressiondata", "binary", shout) if name == "shout" else ""
    property_mapping("XDDEVATTRIBUTEMAPPING", ident, name, "z110", extra)
property_mapping("XDDEVRELATIONSHIPMAPPING", "z250", "tags", "z110", attribute("autogenerateexpression", "bool", 1))
property_mapping("XDDEVRELATIONSHIPMAPPING", "z251", "steps", "z110", attribute("autogenerateexpression", "bool", 1))
obj("XDDEVENTITYMAPPING", "z110",
    attribute("sourcefilterpredicatestring", "string", "count &gt; 0")
    + attribute("migrationpolicyclassname", "string", "KitchenApp.ItemMigrationPolicy")
    + attribute("sourcename", "string", "Item") + attribute("mappingtypename", "string", "Undefined")
    + attribute("mappingnumber", "int16", 1) + attribute("destinationname", "string", "Item")
    + relationship("mappingmodel", "XDDEVMAPPINGMODEL", "z101", True)
    + relationship("attributemappings", "XDDEVATTRIBUTEMAPPING", " ".join(ids))
    + relationship("relationshipmappings", "XDDEVRELATIONSHIPMAPPING", "z250 z251"))
# TagToTag: a constant, and a relationship naming an entity mapping.
property_mapping("XDDEVATTRIBUTEMAPPING", "z300", "label", "z120")
property_mapping("XDDEVATTRIBUTEMAPPING", "z301", "rank", "z120", attribute("valueexpressiondata", "binary", rank))
property_mapping("XDDEVRELATIONSHIPMAPPING", "z302", "items", "z120",
                 attribute("autogenerateexpression", "bool", 1) + attribute("sourcemappingname", "string", "ItemToItem") + attribute("sourcekeypath", "string", "$source.items"))
obj("XDDEVENTITYMAPPING", "z120",
    attribute("sourcename", "string", "Tag") + attribute("mappingtypename", "string", "Undefined")
    + attribute("mappingnumber", "int16", 3) + attribute("destinationname", "string", "Tag")
    + relationship("mappingmodel", "XDDEVMAPPINGMODEL", "z101", True)
    + relationship("attributemappings", "XDDEVATTRIBUTEMAPPING", "z300 z301")
    + relationship("relationshipmappings", "XDDEVRELATIONSHIPMAPPING", "z302"))
# StepToStep and SpecialItemToSpecialItem: everything auto-generated.
property_mapping("XDDEVATTRIBUTEMAPPING", "z400", "text", "z130")
property_mapping("XDDEVRELATIONSHIPMAPPING", "z401", "item", "z130", attribute("autogenerateexpression", "bool", 1))
obj("XDDEVENTITYMAPPING", "z130",
    attribute("sourcename", "string", "Step") + attribute("mappingtypename", "string", "Undefined")
    + attribute("mappingnumber", "int16", 2) + attribute("destinationname", "string", "Step")
    + relationship("mappingmodel", "XDDEVMAPPINGMODEL", "z101", True)
    + relationship("attributemappings", "XDDEVATTRIBUTEMAPPING", "z400")
    + relationship("relationshipmappings", "XDDEVRELATIONSHIPMAPPING", "z401"))
special = []
for i, name in enumerate(item_attributes + ["extra"]):
    ident = f"z{500 + i}"
    special.append(ident)
    property_mapping("XDDEVATTRIBUTEMAPPING", ident, name, "z140")
obj("XDDEVENTITYMAPPING", "z140",
    attribute("sourcename", "string", "SpecialItem") + attribute("mappingtypename", "string", "Undefined")
    + attribute("mappingnumber", "int16", 4) + attribute("destinationname", "string", "SpecialItem")
    + relationship("mappingmodel", "XDDEVMAPPINGMODEL", "z101", True)
    + relationship("attributemappings", "XDDEVATTRIBUTEMAPPING", " ".join(special)))
# A stale entity mapping, as Xcode leaves them: nothing refers to it.
obj("XDDEVENTITYMAPPING", "z190",
    attribute("sourcename", "string", "Item") + attribute("mappingnumber", "int16", 9) + attribute("destinationname", "string", "Tag")
    + relationship("mappingmodel", "XDDEVMAPPINGMODEL", ""))

header = '''<?xml version="1.0" standalone="no"?>
<!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

<database>
    <databaseInfo>
        <version>134481920</version>
        <UUID>0A8C3C1E-5E2B-4B8A-9D41-6F1C2B7E9A10</UUID>
        <nextObjectID>600</nextObjectID>
    </databaseInfo>
'''
folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Kitchen 1-Kitchen 2.xcmappingmodel")
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "xcmapping.xml"), "w") as f:
    f.write(header + "".join(objects) + "</database>\n")
