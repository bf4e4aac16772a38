//! Stacks as allocation sites: the frame filter of `torch.cuda._memory_viz` (internal
//! C++/CPython frames dropped), Python frames preferred, rendered `file.py:line:name`
//! with the directory stripped, innermost first.

use std::collections::HashMap;

use kinetoscope_trace::snapshot::{Frame, Snapshot, StackId};

/// Name fragments of frames `_memory_viz` hides.
const HIDDEN_NAMES: &[&str] = &[
    "unwind::unwind",
    "CapturedTraceback::gather",
    "gather_with_cpp",
    "_start",
    "__libc_start_main",
    "PyEval_",
    "PyObject_",
    "PyFunction_",
];

/// File-name fragments of frames `_memory_viz` hides.
const HIDDEN_FILES: &[&str] = &[
    "core/boxing",
    "/Register",
    "/Redispatch",
    "pythonrun.c",
    "Modules/main.c",
    "Objects/call.c",
    "Objects/methodobject.c",
    "pycore_ceval.h",
    "ceval.c",
    "cpython/abstract.h",
];

/// Most frames kept per site.
pub const MAX_FRAMES: usize = 16;

/// The label of allocations with no recorded stack.
pub const NO_STACK: &str = "<no stack recorded>";

fn hidden(f: &Frame) -> bool {
    HIDDEN_NAMES.iter().any(|h| f.name.contains(h))
        || HIDDEN_FILES.iter().any(|h| f.filename.contains(h))
}

fn is_python(f: &Frame) -> bool {
    f.filename.ends_with(".py")
}

/// `file.py:42:name`, the directory (`/` or `\`) stripped.
pub fn render_frame(f: &Frame) -> String {
    let base = f.filename.rsplit(['/', '\\']).next().unwrap_or(&f.filename);
    format!("{base}:{}:{}", f.line, f.name)
}

/// The site of a stack: shown frames, innermost first (Python frames only when the
/// stack has any), at most [`MAX_FRAMES`]; empty for no stack.
pub fn site_frames(frames: &[Frame]) -> Vec<String> {
    let visible: Vec<&Frame> = frames.iter().filter(|f| !hidden(f)).collect();
    let python = visible.iter().any(|f| is_python(f));
    visible
        .into_iter()
        .filter(|f| !python || is_python(f))
        .take(MAX_FRAMES)
        .map(render_frame)
        .collect()
}

/// Sites interned by their rendered frames, with a cache per [`StackId`].
#[derive(Debug, Default)]
pub struct Sites {
    by_stack: HashMap<StackId, u32>,
    by_frames: HashMap<Vec<String>, u32>,
    /// Rendered frames of each site, by site index.
    pub frames: Vec<Vec<String>>,
}

impl Sites {
    /// The site index of a stack.
    pub fn site(&mut self, snap: &Snapshot, stack: StackId) -> u32 {
        if let Some(s) = self.by_stack.get(&stack) {
            return *s;
        }
        let frames = site_frames(snap.frames(stack));
        let next = self.frames.len() as u32;
        let id = *self.by_frames.entry(frames).or_insert_with_key(|k| {
            self.frames.push(k.clone());
            next
        });
        self.by_stack.insert(stack, id);
        id
    }

    /// The frames to show for a site ([`NO_STACK`] alone for an empty one).
    pub fn display(&self, site: u32) -> Vec<String> {
        let f = &self.frames[site as usize];
        if f.is_empty() {
            vec![NO_STACK.to_owned()]
        } else {
            f.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fr(file: &str, line: i64, name: &str) -> Frame {
        Frame {
            filename: file.into(),
            line,
            name: name.into(),
        }
    }

    #[test]
    fn keeps_python_frames_and_strips_directories() {
        let frames = vec![
            fr("??", 0, "c10::cuda::CUDACachingAllocator::malloc"),
            fr("/x/Python/ceval.c", 10, "_PyEval_EvalFrameDefault"),
            fr("/home/u/model.py", 41, "forward"),
            fr("C:\\u\\train.py", 30, "train_step"),
        ];
        assert_eq!(
            site_frames(&frames),
            vec!["model.py:41:forward", "train.py:30:train_step"]
        );
        let cpp = vec![fr("??", 0, "at::empty"), fr("x.cpp", 3, "PyObject_Call")];
        assert_eq!(site_frames(&cpp), vec!["??:0:at::empty"]);
    }
}
