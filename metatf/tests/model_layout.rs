//! A container whose sections hold a format-specific model is refused by the universal reader,
//! instead of having its streams misread as records.

use metatf::{Codec, ContainerHeader, ContainerWriter, SectionData, UniversalReader};

fn container(properties: Vec<(String, String)>) -> Vec<u8> {
    let header = ContainerHeader {
        dtd: "size.width = 4; size.interpretation = none;\nsection s 1 { alloc : (tag, size) { tag.value = 4; } }\n"
            .to_string(),
        format: "example".to_string(),
        properties,
    };
    let mut writer = ContainerWriter::new(Vec::new(), &header).unwrap();
    // Two bytes that would read as a plausible record under the universal layout.
    let bytes = [2u8, 1];
    let section = SectionData {
        number: 0,
        element_width: 0,
        codec: Codec::None,
        level: 0,
        bytes: &bytes,
    };
    writer.write_block(1, &[section]).unwrap();
    writer.finish().unwrap()
}

#[test]
fn a_model_layout_is_refused_with_a_reason() {
    let file = container(vec![("layout".into(), "example-model-1".into())]);
    let error = match UniversalReader::new(&file[..]) {
        Ok(_) => panic!("a format-specific layout was read as universal records"),
        Err(e) => e.to_string(),
    };
    assert!(
        error.contains("format-specific layout `example-model-1`"),
        "{error}"
    );
}

#[test]
fn the_universal_layout_value_is_accepted() {
    let file = container(vec![("layout".into(), "universal".into())]);
    assert!(UniversalReader::new(&file[..]).is_ok());
}
