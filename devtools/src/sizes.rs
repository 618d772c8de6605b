//! Module sizes: each policy's budget (`policies/<policy>/size-budget.yml`),
//! checked on the module wasm-opt wrote, and where a module's bytes go.
//!
//! Sizes are deterministic for a toolchain, unlike times, so a budget can
//! fail a build: a module that grows past it fails `make test` until the
//! budget is raised, with the reason, in the same commit.

use std::path::Path;

use anyhow::{bail, Context as _, Result};
use serde::Deserialize;

/// `policies/<policy>/size-budget.yml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// The most bytes the optimized module may have (wasm-opt's output,
    /// before `annotate` adds the metadata section that carries the README).
    pub bytes: u64,
    /// Why the budget is what it is: what the last raise paid for.
    pub reason: String,
}

impl Budget {
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let budget: Self =
            serde_norway::from_str(&text).with_context(|| format!("{}", path.display()))?;
        if budget.reason.trim().is_empty() {
            bail!("{}: the reason is empty", path.display());
        }
        Ok(budget)
    }
}

/// One module against its budget: the line to print, and whether it fits.
pub fn check(module: &Path, budget: &Budget) -> Result<(String, bool)> {
    let size = std::fs::metadata(module)
        .with_context(|| format!("cannot read {}; run `make build` first", module.display()))?
        .len();
    let fits = size <= budget.bytes;
    let line = format!(
        "{:<34} {:>9} bytes, budget {:>9} ({:>+6.1}%){}",
        module.display(),
        size,
        budget.bytes,
        (size as f64 / budget.bytes.max(1) as f64 - 1.0) * 100.0,
        if fits { "" } else { "  OVER BUDGET" }
    );
    Ok((line, fits))
}

/// Where a module's bytes go.
#[derive(Debug, Default)]
pub struct Breakdown {
    pub total: usize,
    /// Without custom sections (names, debug info, metadata): what the
    /// module costs to ship and compile, and what percentages are of.
    pub loaded: usize,
    /// Each section's id or custom name, and its size with its header.
    pub sections: Vec<(String, usize)>,
    /// Each function body's (demangled) name and size, largest first.
    pub functions: Vec<(String, usize)>,
    /// Each data segment's size, largest first.
    pub data: Vec<usize>,
}

/// Reads a module's sections, function bodies (named from its `name`
/// section where it has one) and data segments.
pub fn breakdown(wasm: &[u8]) -> Result<Breakdown> {
    use wasmparser::{Name, Parser, Payload};
    let mut out = Breakdown {
        total: wasm.len(),
        ..Breakdown::default()
    };
    let mut imported = 0u32;
    let mut bodies = Vec::new();
    let mut names = std::collections::HashMap::new();
    for payload in Parser::new(0).parse_all(wasm) {
        let payload = payload.context("not a WebAssembly module")?;
        if let Some((id, range)) = payload.as_section() {
            let name = match &payload {
                Payload::CustomSection(c) => format!("custom {}", c.name()),
                _ => section_name(id).to_string(),
            };
            out.sections
                .push((name, with_header(range.end - range.start)));
        }
        match payload {
            Payload::ImportSection(imports) => {
                for import in imports.into_imports() {
                    if matches!(import?.ty, wasmparser::TypeRef::Func(_)) {
                        imported += 1;
                    }
                }
            }
            Payload::CodeSectionEntry(body) => bodies.push(body.range().len()),
            Payload::DataSection(segments) => {
                for segment in segments {
                    out.data.push(segment?.data.len());
                }
            }
            Payload::CustomSection(c) => {
                if let wasmparser::KnownCustom::Name(reader) = c.as_known() {
                    for subsection in reader {
                        if let Name::Function(map) = subsection? {
                            for naming in map {
                                let naming = naming?;
                                names.insert(naming.index, naming.name.to_string());
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let custom: usize = out
        .sections
        .iter()
        .filter(|(name, _)| name.starts_with("custom "))
        .map(|(_, size)| size)
        .sum();
    out.loaded = out.total - custom;
    out.functions = bodies
        .into_iter()
        .enumerate()
        .map(|(i, size)| {
            let index = imported.saturating_add(u32::try_from(i).unwrap_or(u32::MAX));
            let name = names.get(&index).map_or_else(
                || format!("function {index}"),
                |n| format!("{:#}", rustc_demangle::demangle(n)),
            );
            (name, size)
        })
        .collect();
    out.functions.sort_by_key(|f| std::cmp::Reverse(f.1));
    out.data.sort_unstable_by_key(|&d| std::cmp::Reverse(d));
    Ok(out)
}

/// A section's size with its header: the id byte and the LEB128 length.
fn with_header(content: usize) -> usize {
    let mut leb = 1;
    let mut rest = content >> 7;
    while rest > 0 {
        leb += 1;
        rest >>= 7;
    }
    content + 1 + leb
}

fn section_name(id: u8) -> &'static str {
    match id {
        1 => "type",
        2 => "import",
        3 => "function",
        4 => "table",
        5 => "memory",
        6 => "global",
        7 => "export",
        8 => "start",
        9 => "element",
        10 => "code",
        11 => "data",
        12 => "data count",
        _ => "other",
    }
}

/// The breakdown as text: sections, then the `top` largest functions.
pub fn print(label: &str, b: &Breakdown, top: usize) {
    println!(
        "\n{label}: {} bytes, {} without custom sections (the percentages' whole)",
        b.total, b.loaded
    );
    for (name, size) in &b.sections {
        println!(
            "  {:<28} {:>9} {:>5.1}%",
            name,
            size,
            percent(*size, b.loaded)
        );
    }
    let data: usize = b.data.iter().sum();
    println!(
        "  data segments: {} totalling {data} bytes, the largest {:?}",
        b.data.len(),
        b.data.iter().take(5).collect::<Vec<_>>()
    );
    println!("  the {top} largest of {} functions:", b.functions.len());
    for (name, size) in b.functions.iter().take(top) {
        let mut shown: String = name.chars().take(110).collect();
        if shown.len() < name.len() {
            shown.push('…');
        }
        println!("  {:>8} {:>5.1}%  {shown}", size, percent(*size, b.loaded));
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    part as f64 * 100.0 / whole.max(1) as f64
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    #[test]
    fn a_budget_needs_its_reason_and_refuses_unknown_fields() {
        let dir = std::env::temp_dir().join(format!("sizes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("size-budget.yml");
        std::fs::write(&file, "bytes: 10\nreason: the first build\n").unwrap();
        assert_eq!(Budget::load(&file).unwrap().bytes, 10);
        std::fs::write(&file, "bytes: 10\nreason: ' '\n").unwrap();
        assert!(Budget::load(&file).is_err());
        std::fs::write(&file, "bytes: 10\nreason: x\nbyte: 3\n").unwrap();
        assert!(Budget::load(&file).is_err());
        assert!(Budget::load(&dir.join("absent.yml")).is_err());
        let budget = Budget {
            bytes: 10,
            reason: "x".into(),
        };
        let module = dir.join("m.wasm");
        std::fs::write(&module, [0u8; 10]).unwrap();
        assert!(check(&module, &budget).unwrap().1);
        std::fs::write(&module, [0u8; 11]).unwrap();
        let (line, fits) = check(&module, &budget).unwrap();
        assert!(!fits && line.ends_with("OVER BUDGET"), "{line}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_breakdown_names_functions_and_counts_every_byte_once() {
        let wasm = wasm_encoder_module();
        let b = breakdown(&wasm).unwrap();
        assert_eq!(b.functions.len(), 2);
        assert_eq!(b.functions[0].0, "big");
        assert!(b.functions[0].1 > b.functions[1].1);
        assert_eq!(b.data, vec![5]);
        let sections: usize = b.sections.iter().map(|(_, s)| s).sum();
        assert_eq!(sections + 8, b.total, "{:?}", b.sections);
        let names = b.sections.iter().find(|(n, _)| n == "custom name").unwrap();
        assert_eq!(b.loaded + names.1, b.total, "the name section is custom");
    }

    fn wasm_encoder_module() -> Vec<u8> {
        use wasm_encoder::{
            CodeSection, ConstExpr, DataSection, Function, FunctionSection, Instruction,
            MemorySection, MemoryType, Module, NameMap, NameSection, TypeSection,
        };
        let mut module = Module::new();
        let mut types = TypeSection::new();
        types.ty().function([], []);
        module.section(&types);
        let mut functions = FunctionSection::new();
        functions.function(0);
        functions.function(0);
        module.section(&functions);
        let mut memory = MemorySection::new();
        memory.memory(MemoryType {
            minimum: 1,
            maximum: None,
            memory64: false,
            shared: false,
            page_size_log2: None,
        });
        module.section(&memory);
        let mut code = CodeSection::new();
        let mut small = Function::new([]);
        small.instruction(&Instruction::End);
        code.function(&small);
        let mut big = Function::new([]);
        for _ in 0..8 {
            big.instruction(&Instruction::I32Const(1));
            big.instruction(&Instruction::Drop);
        }
        big.instruction(&Instruction::End);
        code.function(&big);
        module.section(&code);
        let mut data = DataSection::new();
        data.active(0, &ConstExpr::i32_const(0), b"hello".iter().copied());
        module.section(&data);
        let mut names = NameSection::new();
        let mut map = NameMap::new();
        map.append(0, "small");
        map.append(1, "big");
        names.functions(&map);
        module.section(&names);
        module.finish()
    }
}
