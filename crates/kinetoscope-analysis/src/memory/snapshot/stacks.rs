//! Stacks as allocation sites: every frame of the recorded stack (Python and C++) except
//! the stack capture's own, which `torch.cuda._memory_viz` hides too, rendered
//! `file.py:line:name` with the directory stripped, innermost first; and the site's
//! first user-level Python frame — the innermost frame of a `.py` file outside torch
//! (`…/torch/…`) and Python's own library — which is what a reader looks for first.

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

/// Whether a Python frame is torch's own or the Python library's (not user code).
fn is_internal_python(filename: &str) -> bool {
    let f = filename.replace('\\', "/");
    let in_stdlib =
        (f.contains("/lib/python3") || f.contains("/Lib/")) && !f.contains("-packages/");
    f.contains("/torch/") || f.starts_with("torch/") || f.starts_with('<') || in_stdlib
}

/// The frames of a site: every frame of the stack but the capture's own, innermost
/// first; empty for no stack.
pub fn site_frames(frames: &[Frame]) -> Vec<String> {
    frames
        .iter()
        .filter(|f| !hidden(f))
        .map(render_frame)
        .collect()
}

/// The first user-level Python frame of a stack (innermost first), rendered.
pub fn user_frame(frames: &[Frame]) -> Option<String> {
    frames
        .iter()
        .find(|f| is_python(f) && !is_internal_python(&f.filename))
        .map(render_frame)
}

/// Allocation operators that only carry out another operator's request.
const ALLOCATION_OPS: &[&str] = &["empty", "empty_strided", "empty_like", "new_empty"];

/// `aten::NAME` for a frame of `at::_ops::NAME::call` / `::redispatch`, except the
/// allocation operators every allocation passes through.
fn aten_op(name: &str) -> Option<String> {
    let rest = &name[name.find("at::_ops::")? + "at::_ops::".len()..];
    let op = &rest[..rest.find("::")?];
    (!op.is_empty() && !ALLOCATION_OPS.contains(&op)).then(|| format!("aten::{op}"))
}

/// The autograd node of a frame of `torch::autograd::generated::NODE::apply` (or
/// `NODE_apply_functional`).
fn autograd_node(name: &str) -> Option<&str> {
    let rest = &name[name.find("autograd::generated::")? + "autograd::generated::".len()..];
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let node = rest[..end].trim_end_matches("_apply_functional");
    (!node.is_empty()).then_some(node)
}

/// For a stack with no user-level Python frame — the autograd engine's threads record
/// C++ frames only — the ATen operator that allocated and the autograd node that ran it
/// (`aten::nll_loss_backward in NllLossBackward0`), the innermost of each.
pub fn op_site(frames: &[Frame]) -> Option<String> {
    if user_frame(frames).is_some() {
        return None;
    }
    native_site(frames)
}

/// The innermost ATen operator and autograd node of a stack, whatever else it holds.
fn native_site(frames: &[Frame]) -> Option<String> {
    let op = frames.iter().find_map(|f| aten_op(&f.name));
    let node = frames.iter().find_map(|f| autograd_node(&f.name));
    match (op, node) {
        (Some(op), Some(node)) => Some(format!("{op} in {node}")),
        (Some(op), None) => Some(op),
        (None, Some(node)) => Some(node.to_owned()),
        (None, None) => None,
    }
}

/// Sites interned by their rendered frames, with a cache per [`StackId`].
#[derive(Debug, Default)]
pub struct Sites {
    by_stack: HashMap<StackId, u32>,
    by_frames: HashMap<Vec<String>, u32>,
    /// Rendered frames of each site, by site index.
    pub frames: Vec<Vec<String>>,
    /// The first user-level Python frame of each site, by site index.
    pub user_frames: Vec<Option<String>>,
    /// The operator and autograd node of each site without a user frame, by site index.
    pub op_sites: Vec<Option<String>>,
}

impl Sites {
    /// The site index of a stack.
    pub fn site(&mut self, snap: &Snapshot, stack: StackId) -> u32 {
        if let Some(s) = self.by_stack.get(&stack) {
            return *s;
        }
        let raw = snap.frames(stack);
        let frames = site_frames(raw);
        let id = match self.by_frames.get(&frames) {
            Some(&id) => id,
            None => {
                let id = self.frames.len() as u32;
                self.by_frames.insert(frames.clone(), id);
                self.frames.push(frames);
                let user = user_frame(raw);
                self.op_sites
                    .push(user.is_none().then(|| native_site(raw)).flatten());
                self.user_frames.push(user);
                id
            }
        };
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

    /// The first user-level Python frame of a site, if any.
    pub fn user_frame(&self, site: u32) -> Option<String> {
        self.user_frames[site as usize].clone()
    }

    /// The operator and autograd node of a site without a user frame, if known.
    pub fn op_site(&self, site: u32) -> Option<String> {
        self.op_sites[site as usize].clone()
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
    fn full_stack_and_the_first_user_frame() {
        let frames = vec![
            fr("??", 0, "c10::cuda::CUDACachingAllocator::malloc"),
            fr("/x/Python/ceval.c", 10, "_PyEval_EvalFrameDefault"),
            fr(
                "/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py",
                125,
                "forward",
            ),
            fr("/usr/lib/python3.11/contextlib.py", 81, "inner"),
            fr("/home/u/model.py", 41, "forward"),
            fr("C:\\u\\train.py", 30, "train_step"),
        ];
        assert_eq!(
            site_frames(&frames),
            vec![
                "??:0:c10::cuda::CUDACachingAllocator::malloc",
                "linear.py:125:forward",
                "contextlib.py:81:inner",
                "model.py:41:forward",
                "train.py:30:train_step"
            ]
        );
        assert_eq!(user_frame(&frames).as_deref(), Some("model.py:41:forward"));
        let venv_lib = [fr(
            "/v/lib/python3.11/site-packages/lightning/loop.py",
            9,
            "run",
        )];
        assert_eq!(user_frame(&venv_lib).as_deref(), Some("loop.py:9:run"));
        let cpp = vec![fr("??", 0, "at::empty"), fr("x.cpp", 3, "PyObject_Call")];
        assert_eq!(site_frames(&cpp), vec!["??:0:at::empty"]);
        assert_eq!(user_frame(&cpp), None);
        assert_eq!(op_site(&frames), None, "a stack with a user frame");
    }

    #[test]
    fn autograd_thread_stacks_name_the_operator_and_the_node() {
        let frames = vec![
            fr("??", 0, "torch::unwind::unwind()"),
            fr("CUDACachingAllocator.cpp", 0, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)"),
            fr("??", 0, "at::_ops::empty_strided::redispatch(c10::DispatchKeySet)"),
            fr("??", 0, "at::_ops::nll_loss_backward::call(at::Tensor const&)"),
            fr("Functions.cpp", 0, "torch::autograd::generated::NllLossBackward0_apply_functional(std::vector<at::Tensor>)"),
            fr("??", 0, "torch::autograd::generated::NllLossBackward0::apply(std::vector<at::Tensor>&&)"),
            fr("??", 0, "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)"),
        ];
        assert_eq!(user_frame(&frames), None);
        assert_eq!(
            op_site(&frames).as_deref(),
            Some("aten::nll_loss_backward in NllLossBackward0")
        );
        assert_eq!(
            op_site(&frames[..4]).as_deref(),
            Some("aten::nll_loss_backward")
        );
        assert_eq!(op_site(&frames[..3]), None, "allocation operators only");
    }
}
