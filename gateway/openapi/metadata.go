package openapi

// Metadata is the schema of an object's metadata (payments/metadata): the merchant's own
// string keys and values, returned on the object and in its webhooks.
func Metadata() Schema {
	return Schema{"type": "object", "maxProperties": 50, "additionalProperties": Schema{"type": "string", "maxLength": 500},
		"description": "your own keys and values: at most 50 keys of 1 to 40 characters, string values up to 500 characters"}
}

// MetadataPatch is the schema of metadata in an update: the keys given are set, a key given
// the empty string is removed, the others stay.
func MetadataPatch() Schema {
	return Schema{"type": "object", "additionalProperties": Schema{"type": "string", "maxLength": 500},
		"description": "keys to set; a key set to \"\" is removed; keys not named stay (at most 50 after the change)"}
}

// MetadataFilter is the metadata[KEY]=VALUE query parameter of a list.
func MetadataFilter() Param {
	return Param{Name: "metadata", Description: "metadata[KEY]=VALUE: only records whose metadata has KEY set to VALUE (repeat for several keys)",
		Schema: Schema{"type": "object", "additionalProperties": Schema{"type": "string"}}}
}
