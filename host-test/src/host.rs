//! A waPC host on wasmtime that runs a policy module as Kubewarden's
//! policy-server does: one Engine and one pre-instantiated Module per policy,
//! a fresh Store and instance for every call, `_start` and `wapc_init` run
//! after instantiation, an epoch deadline ticking once a second, and the WASI
//! clock pinned to the instant under test. A memory cap is a harness option:
//! policy-server sets none.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use guard_core::Timestamp;
use wasmtime::error::Context as _;
use wasmtime::{bail, format_err as anyhow, Result};
use wasmtime::{
    Caller, Config, Engine, Extern, InstancePre, Linker, Memory, Module, ResourceLimiter, Store,
    Trap,
};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::{HostWallClock, WasiCtxBuilder};

use crate::capabilities::{Capabilities, HostRefusal};
use conformance::NoAnswer;

/// policy-server increments the engine's epoch once a second and sets a
/// deadline of `--policy-timeout` ticks (kubewarden/kubewarden-controller
/// 3460bb71, `crates/policy-server/src/lib.rs`, `PolicyServer::new_from_config`;
/// wasmtime-provider 2.19.0 `WasmtimeEngineProvider::call`), so a call is cut
/// between N-1 and N seconds after it starts.
const TICK: Duration = Duration::from_secs(1);

pub use conformance::response::TIMEOUT_MESSAGE;

/// How each evaluation is bounded.
#[derive(Debug, Clone)]
pub struct Limits {
    /// policy-server's `--policy-timeout` in whole seconds (default 2); `None`
    /// runs without a deadline, as `kwctl run` does.
    pub timeout_seconds: Option<u64>,
    /// A cap on one instance's linear memory. Harness-only: policy-server has none.
    pub memory_bytes: Option<usize>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout_seconds: Some(2),
            memory_bytes: None,
        }
    }
}

/// Why a waPC call produced no reply.
#[derive(Debug)]
pub enum CallError {
    /// The guest reported an error through `__guest_error`.
    Guest(String),
    Timeout,
    /// The harness' own memory cap was hit.
    MemoryExhausted(usize),
    /// The module trapped or broke the waPC protocol.
    Trap(String),
    /// `_start` or `wapc_init` ran out of time.
    InitTimeout,
    /// `_start` or `wapc_init` trapped, or the module could not be
    /// instantiated: wasmtime-provider 2.19.0's error text
    /// (`WasmtimeEngineProvider::init` and `initialize`).
    InitFailed(String),
    /// A host call policy-server never answers: the host stopped the guest
    /// where policy-server would keep it waiting.
    NoAnswer(NoAnswer),
}

/// The error a host function returns to stop the guest at a call that
/// policy-server never answers; [`classify`] finds it again.
#[derive(Debug)]
struct StoppedByHost(NoAnswer);

impl std::fmt::Display for StoppedByHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for StoppedByHost {}

impl std::error::Error for CallError {}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Guest(m) => write!(f, "{m}"),
            CallError::Timeout => f.write_str(TIMEOUT_MESSAGE),
            CallError::MemoryExhausted(limit) => write!(
                f,
                "Policy execution aborted: the policy exceeded its memory limit of {} MiB",
                limit >> 20
            ),
            CallError::Trap(m) => f.write_str(m),
            CallError::InitTimeout => f.write_str("policy initialization ran out of time"),
            CallError::InitFailed(m) => write!(f, "policy initialization failed: {m}"),
            CallError::NoAnswer(n) => n.fmt(f),
        }
    }
}

/// The WASI wall clock, fixed at one instant.
struct FixedClock(Duration);

impl HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }
    fn now(&self) -> Duration {
        self.0
    }
}

/// Caps linear memory, remembering whether the cap was hit so that the
/// resulting trap (Rust aborts when an allocation fails) can be named, and
/// the largest size granted: linear memory never shrinks, so that is the
/// instance's peak.
struct MemoryCap {
    limit: Option<usize>,
    hit: bool,
    peak: usize,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> Result<bool> {
        if self.limit.is_some_and(|limit| desired > limit) {
            self.hit = true;
            return Ok(false);
        }
        self.peak = self.peak.max(desired);
        Ok(true)
    }
    fn table_growing(
        &mut self,
        _current: usize,
        _desired: usize,
        _max: Option<usize>,
    ) -> Result<bool> {
        Ok(true)
    }
}

/// What one Store carries: WASI, the limiter, and the waPC exchange buffers.
struct HostState {
    wasi: WasiP1Ctx,
    memory: MemoryCap,
    operation: Vec<u8>,
    payload: Vec<u8>,
    guest_response: Option<Vec<u8>>,
    guest_error: Option<String>,
    host_response: Vec<u8>,
    host_error: Vec<u8>,
    capabilities: Box<dyn Capabilities>,
    /// Time spent answering host calls: policy-server's side of a lookup.
    host_time: Duration,
    /// The same, on the thread's CPU clock ([`thread_cpu_time`]).
    host_cpu_time: Duration,
}

/// The CPU time the calling thread has run: unlike the wall clock, it does
/// not count the time the thread waited for a core while other processes ran.
pub fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// A policy module, compiled and linked once, instantiated per call.
pub struct PolicyModule {
    engine: Engine,
    pre: InstancePre<HostState>,
    module_bytes: usize,
    ticker: Arc<AtomicBool>,
}

impl Drop for PolicyModule {
    fn drop(&mut self) {
        self.ticker.store(false, Ordering::Relaxed);
    }
}

impl PolicyModule {
    /// Compiles and links `wasm` once (policy-server keeps one per digest).
    pub fn new(wasm: &[u8]) -> Result<Self> {
        let mut config = Config::new();
        config.epoch_interruption(true);
        let engine = Engine::new(&config)?;
        let module = Module::new(&engine, wasm).context("not a loadable WebAssembly module")?;
        let mut linker: Linker<HostState> = Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |s: &mut HostState| &mut s.wasi)?;
        link_wapc(&mut linker)?;
        let pre = linker
            .instantiate_pre(&module)
            .context("the module's imports are not those of a waPC policy")?;
        let ticker = Arc::new(AtomicBool::new(true));
        {
            let (engine, running) = (engine.clone(), ticker.clone());
            std::thread::spawn(move || {
                while running.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    engine.increment_epoch();
                }
            });
        }
        Ok(Self {
            engine,
            pre,
            module_bytes: wasm.len(),
            ticker,
        })
    }

    pub fn size(&self) -> usize {
        self.module_bytes
    }

    /// A fresh instance, initialised, ready for calls.
    pub fn instantiate(
        &self,
        now: Timestamp,
        limits: &Limits,
        capabilities: Box<dyn Capabilities>,
    ) -> Result<Instance<'_>, CallError> {
        // WASI's wall clock is a Duration since 1970: an earlier instant
        // cannot be shown to the guest, so it is refused, not moved.
        let since_epoch = u64::try_from(now.as_second())
            .ok()
            .and_then(|secs| {
                let nanos = u32::try_from(now.subsec_nanosecond()).ok()?;
                Some(Duration::new(secs, nanos))
            })
            .ok_or_else(|| {
                CallError::InitFailed(format!("the WASI clock cannot show {now}, before 1970"))
            })?;
        let wasi = WasiCtxBuilder::new()
            .wall_clock(FixedClock(since_epoch))
            .build_p1();
        let state = HostState {
            wasi,
            memory: MemoryCap {
                limit: limits.memory_bytes,
                hit: false,
                peak: 0,
            },
            operation: Vec::new(),
            payload: Vec::new(),
            guest_response: None,
            guest_error: None,
            host_response: Vec::new(),
            host_error: Vec::new(),
            capabilities,
            host_time: Duration::ZERO,
            host_cpu_time: Duration::ZERO,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.memory);
        // No deadline is one no epoch reaches (about 35,000 years of ticks;
        // not u64::MAX, which wasmtime adds to the current epoch).
        let ticks = limits.timeout_seconds.unwrap_or(1 << 40);
        store.set_epoch_deadline(ticks);
        let instance = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| CallError::InitFailed(e.to_string()))?;
        let mut inst = Instance {
            store,
            instance,
            ticks,
            _module: self,
        };
        for init in ["_start", "wapc_init"] {
            if let Some(f) = inst.instance.get_func(&mut inst.store, init) {
                inst.store.set_epoch_deadline(ticks);
                // wasmtime-provider's `initialize` tells an interrupt from
                // any other failure; policy-server answers the first with its
                // timeout rejection and the second with HTTP 500.
                // Its other failures read `Initialization failed: {error}`
                // (`Error::InitializationFailed`).
                f.call(&mut inst.store, &[], &mut []).map_err(|e| {
                    match classify(&inst.store, e) {
                        CallError::Timeout => CallError::InitTimeout,
                        other => CallError::InitFailed(format!("Initialization failed: {other}")),
                    }
                })?;
            }
        }
        Ok(inst)
    }
}

/// One instance of a policy module: a Store and what lives in it.
pub struct Instance<'m> {
    store: Store<HostState>,
    instance: wasmtime::Instance,
    ticks: u64,
    _module: &'m PolicyModule,
}

impl Instance<'_> {
    /// Calls a waPC operation; `Ok` holds the guest's reply.
    pub fn call(&mut self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, CallError> {
        let guest_call = self
            .instance
            .get_typed_func::<(i32, i32), i32>(&mut self.store, "__guest_call")
            .map_err(|_| CallError::Trap("the module does not export __guest_call".into()))?;
        let op_len = len_i32(operation.len())?;
        let payload_len = len_i32(payload.len())?;
        let state = self.store.data_mut();
        state.operation = operation.as_bytes().to_vec();
        state.payload = payload.to_vec();
        state.guest_response = None;
        state.guest_error = None;
        self.store.set_epoch_deadline(self.ticks);
        let ok = guest_call
            .call(&mut self.store, (op_len, payload_len))
            .map_err(|e| classify(&self.store, e))?;
        let state = self.store.data_mut();
        if ok == 1 {
            state.guest_response.take().ok_or_else(|| {
                CallError::Trap("the guest returned success without a response".into())
            })
        } else {
            Err(CallError::Guest(state.guest_error.take().unwrap_or_else(
                || format!("the guest failed {operation} without an error message"),
            )))
        }
    }

    /// The largest the instance's linear memory has been, in bytes: its
    /// initial size included, whatever the calls made of it since (growth
    /// the memory cap refused is not counted).
    pub fn peak_memory_bytes(&mut self) -> usize {
        let now = match self.instance.get_export(&mut self.store, "memory") {
            Some(Extern::Memory(m)) => m.data_size(&self.store),
            _ => 0,
        };
        self.store.data().memory.peak.max(now)
    }

    /// Time the host spent answering the guest's host calls so far (the
    /// serializing of looked-up objects that policy-server does too).
    pub fn host_time(&self) -> Duration {
        self.store.data().host_time
    }

    /// [`Instance::host_time`] on the thread's CPU clock.
    pub fn host_cpu_time(&self) -> Duration {
        self.store.data().host_cpu_time
    }

    /// Log lines the guest sent through `tracing/log` and `__console_log`.
    pub fn logs(&self) -> Vec<String> {
        self.store.data().capabilities.logs()
    }

    /// The Kubernetes calls the guest made, as a kwctl session.
    pub fn session(&self) -> Vec<crate::capabilities::Exchange> {
        self.store.data().capabilities.session()
    }
}

fn len_i32(n: usize) -> Result<i32, CallError> {
    i32::try_from(n).map_err(|_| CallError::Trap("payload larger than 2 GiB".into()))
}

fn classify(store: &Store<HostState>, error: wasmtime::Error) -> CallError {
    let memory = &store.data().memory;
    if let (true, Some(limit)) = (memory.hit, memory.limit) {
        return CallError::MemoryExhausted(limit);
    }
    if let Some(StoppedByHost(none)) = error.downcast_ref::<StoppedByHost>() {
        return CallError::NoAnswer(none.clone());
    }
    // wasmtime-provider keeps `err.to_string()` as the guest error
    // (`WasmtimeEngineProvider::call`), so the Display form, not `{:#}`.
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => CallError::Timeout,
        _ => CallError::Trap(error.to_string()),
    }
}

fn memory(caller: &mut Caller<'_, HostState>) -> Result<Memory> {
    match caller.get_export("memory") {
        Some(Extern::Memory(m)) => Ok(m),
        _ => bail!("the module does not export its memory"),
    }
}

fn read(caller: &mut Caller<'_, HostState>, ptr: i32, len: i32) -> Result<Vec<u8>> {
    let mem = memory(caller)?;
    let start = usize::try_from(ptr).map_err(|_| anyhow!("negative pointer"))?;
    let len = usize::try_from(len).map_err(|_| anyhow!("negative length"))?;
    let end = start
        .checked_add(len)
        .ok_or_else(|| anyhow!("range overflows"))?;
    mem.data(&caller)
        .get(start..end)
        .map(<[u8]>::to_vec)
        .ok_or_else(|| anyhow!("guest range {start}..{end} is outside its memory"))
}

fn write(caller: &mut Caller<'_, HostState>, ptr: i32, bytes: &[u8]) -> Result<()> {
    let mem = memory(caller)?;
    let start = usize::try_from(ptr).map_err(|_| anyhow!("negative pointer"))?;
    mem.write(caller, start, bytes)
        .map_err(|_| anyhow!("guest pointer {start} is outside its memory"))
}

/// The `wapc` imports, after the waPC protocol.
#[expect(
    clippy::too_many_lines,
    reason = "one closure per waPC import, as the protocol lists them"
)]
fn link_wapc(linker: &mut Linker<HostState>) -> Result<()> {
    linker.func_wrap(
        "wapc",
        "__guest_request",
        |mut c: Caller<'_, HostState>, op_ptr: i32, ptr: i32| -> Result<()> {
            let (op, payload) = {
                let s = c.data();
                (s.operation.clone(), s.payload.clone())
            };
            write(&mut c, op_ptr, &op)?;
            write(&mut c, ptr, &payload)
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__guest_response",
        |mut c: Caller<'_, HostState>, ptr: i32, len: i32| -> Result<()> {
            let bytes = read(&mut c, ptr, len)?;
            c.data_mut().guest_response = Some(bytes);
            Ok(())
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__guest_error",
        |mut c: Caller<'_, HostState>, ptr: i32, len: i32| -> Result<()> {
            let bytes = read(&mut c, ptr, len)?;
            c.data_mut().guest_error = Some(String::from_utf8_lossy(&bytes).into_owned());
            Ok(())
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__host_call",
        |mut c: Caller<'_, HostState>,
         bd_ptr: i32,
         bd_len: i32,
         ns_ptr: i32,
         ns_len: i32,
         op_ptr: i32,
         op_len: i32,
         ptr: i32,
         len: i32|
         -> Result<i32> {
            let binding = String::from_utf8_lossy(&read(&mut c, bd_ptr, bd_len)?).into_owned();
            let namespace = String::from_utf8_lossy(&read(&mut c, ns_ptr, ns_len)?).into_owned();
            let operation = String::from_utf8_lossy(&read(&mut c, op_ptr, op_len)?).into_owned();
            let payload = read(&mut c, ptr, len)?;
            let state = c.data_mut();
            state.host_response.clear();
            state.host_error.clear();
            let started = Instant::now();
            let started_cpu = thread_cpu_time();
            let answer = state
                .capabilities
                .call(&binding, &namespace, &operation, &payload);
            state.host_time += started.elapsed();
            state.host_cpu_time += thread_cpu_time().saturating_sub(started_cpu);
            match answer {
                Ok(reply) => {
                    state.host_response = reply;
                    Ok(1)
                }
                Err(HostRefusal::Error(e)) => {
                    state.host_error = e.into_bytes();
                    Ok(0)
                }
                // policy-server would block the guest here until the
                // review is abandoned; the harness ends the call instead.
                Err(HostRefusal::NoAnswer(none)) => Err(wasmtime::Error::new(StoppedByHost(none))),
            }
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__host_response_len",
        |c: Caller<'_, HostState>| -> i32 {
            i32::try_from(c.data().host_response.len()).unwrap_or(i32::MAX)
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__host_response",
        |mut c: Caller<'_, HostState>, ptr: i32| -> Result<()> {
            let bytes = c.data().host_response.clone();
            write(&mut c, ptr, &bytes)
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__host_error_len",
        |c: Caller<'_, HostState>| -> i32 {
            i32::try_from(c.data().host_error.len()).unwrap_or(i32::MAX)
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__host_error",
        |mut c: Caller<'_, HostState>, ptr: i32| -> Result<()> {
            let bytes = c.data().host_error.clone();
            write(&mut c, ptr, &bytes)
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__console_log",
        |mut c: Caller<'_, HostState>, ptr: i32, len: i32| -> Result<()> {
            let bytes = read(&mut c, ptr, len)?;
            c.data_mut()
                .capabilities
                .log(String::from_utf8_lossy(&bytes).into_owned());
            Ok(())
        },
    )?;
    Ok(())
}
