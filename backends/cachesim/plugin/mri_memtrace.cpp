// mri_memtrace.cpp - a clang pass plugin that records every load and store
// of the code it compiles for the cache simulator, inline:
//
//   clang -O2 -fpass-plugin=.../mri_memtrace.so -c prog.c
//
// It does what clang's SanitizerCoverage trace-loads/trace-stores do for
// the backend (instrument.cpp), at the same point of the pipeline (after
// every optimisation, so the program's loads and stores are those of its
// optimised code: registers stay registers, vectorised loops stay
// vectorised), but instead of a call per reference it inserts the
// recording itself (backends/cachesim/mri_cachesim_abi.h, record_run
// below): per run of references without a call between them, a byte
// load and, recording, the thread's cursor; per reference, a test of a
// register and, recording, a 16-byte store; a call only where the buffer
// has no room for the run. A call clobbers every vector register, so a
// call per reference also cost the vectorised loops their registers:
// dormant, the ikj matrix multiply of bench/matmul.c ran 5.6 times its
// native time with SanitizerCoverage's callbacks and 1.2-1.6 times with
// this (docs/PERFORMANCE.md, "Inline recording").
//
// Every LoadInst and StoreInst of address space 0 with a fixed size is
// recorded, atomic and volatile ones included (as SanitizerCoverage does;
// it skips sizes other than 1, 2, 4, 8 and 16 bytes, which this records
// too: the 32- and 64-byte vector references of -mavx and -mavx512f code).
// Not recorded, as with SanitizerCoverage: memcpy/memset and other
// intrinsics, masked and gathered vector references, atomic
// read-modify-writes, and functions marked no_sanitize("coverage").
//
// The plugin must be loaded by the clang whose LLVM it was built against
// (backends/cachesim/CMakeLists.txt checks the major versions).
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/PassPlugin.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

using namespace llvm;

namespace {

// The runtime's objects (mri_cachesim_abi.h, whose version this is; its
// layouts are restated below: the header is the program's, not the
// compiler's, and pulls in libmonitor's), declared in each module that
// records.
constexpr uint64_t kAbiVersion = 2;  // MRI_CACHESIM_ABI_VERSION
struct Runtime {
  StructType* cursor_type;  // Mri_Cachesim_Cursor: {next[2], end[2]}
  GlobalVariable* cursor;   // __mri_cachesim_cursor, initial-exec TLS
  StructType* split_type;   // Monitor_Cache_Split: {shift, mask, address_bits}
  Constant* split;          // __mri_cachesim_split
  Constant* recording;      // __mri_cachesim_recording (a byte)
  Constant* calibrating;    // __mri_cachesim_calibrating: the switch of the calibration loop
  FunctionCallee record;    // __mri_cachesim_record(address, meta)

  explicit Runtime(Module& m) {
    LLVMContext& c = m.getContext();
    Type* i8 = Type::getInt8Ty(c);
    Type* i32 = Type::getInt32Ty(c);
    Type* i64 = Type::getInt64Ty(c);
    PointerType* ptr = Type::getInt8PtrTy(c);
    cursor_type = StructType::get(c, {ArrayType::get(ptr, 2), ArrayType::get(ptr, 2)});
    cursor = m.getGlobalVariable("__mri_cachesim_cursor");
    if (!cursor)
      cursor = new GlobalVariable(m, cursor_type, false, GlobalValue::ExternalLinkage, nullptr,
                                  "__mri_cachesim_cursor", nullptr, GlobalValue::InitialExecTLSModel);
    split_type = StructType::get(c, {i32, i64, i64});
    split = m.getOrInsertGlobal("__mri_cachesim_split", split_type);
    recording = m.getOrInsertGlobal("__mri_cachesim_recording", i8);
    calibrating = m.getOrInsertGlobal("__mri_cachesim_calibrating", i8);
    // Cold: the register allocator then keeps the program's values in
    // registers through the run and spills only on the way to the call
    // (without it, the ijk multiply's sum lived on the stack, dormant).
    AttributeList cold = AttributeList().addFnAttribute(c, Attribute::Cold).addFnAttribute(c, Attribute::NoUnwind);
    record = m.getOrInsertFunction("__mri_cachesim_record", cold, Type::getVoidTy(c), ptr, i64);
  }
};

// The runtime's calibration loop (calibrate_inline.c): recorded like the
// program's code, but switched by a byte of its own, so that calibrating
// never makes the program's threads record.
bool calibration(const Function& f) { return f.getName().startswith("__mri_calibrate_"); }

// Functions left alone: those the user excluded as from SanitizerCoverage,
// the runtime's and the sanitizers' own, module constructors.
bool skipped(const Function& f) {
  if (f.isDeclaration() || f.hasFnAttribute(Attribute::NoSanitizeCoverage) ||
      f.hasFnAttribute(Attribute::DisableSanitizerInstrumentation) || f.hasFnAttribute(Attribute::Naked))
    return true;
  const StringRef name = f.getName();
  return (name.startswith("__mri_") && !calibration(f)) || name.startswith("__sanitizer_") ||
         name.contains(".module_ctor");
}

// One access to record: a load or a store of `bytes` bytes at `address`.
struct Access {
  Instruction* at;
  Value* address;
  uint64_t bytes;
  uint64_t type;  // 0 read, 1 write
};

// Whether `i` may record references or flush the thread's buffer (a call
// into instrumented code, libmonitor or anything unknown): a run of
// accesses that holds the cursor in registers must not span it.
bool may_record(const Instruction& i) {
  const auto* call = dyn_cast<CallBase>(&i);
  return call && !isa<IntrinsicInst>(call);
}

// At most this many accesses share one cursor load: each needs a record's
// room in the buffer (4096) from the run's start.
constexpr size_t kMaxRun = 256;

// Records a run of accesses of one basic block with no call between them.
// The thread's cursor is loaded once, before the first, and the records go
// at fixed offsets from it: a cursor stored by one access and loaded by
// the next would make every reference wait for store-to-load forwarding
// (about 5 cycles, the recording's whole cost in a vectorised loop).
// Before the first access:
//
//   on = recording
//   fast = on && split.address_bits == 0 && cursor.end[0] - (at = cursor.next[0]) >= 16 n   (signed)
//
// (the cursor's loads only while recording) and before access i, of
// address a (one test of a register while dormant):
//
//   if (on) { if (fast) *(at + 16 i) = {a, meta}; else __mri_cachesim_record(a, meta); }
//
// After the last record, cursor.next[0] = at + 16 n, unless the cursor
// moved meanwhile (a signal handler in instrumented code recorded or
// flushed; its references are kept, the run's dropped: never simulated
// twice). The call is for a run without room (it makes room), and for a
// backend that asked for references sorted by part (address_bits != 0);
// the runtime does not ask where the program records inline
// (instrument.cpp): sorting inline cost 1.5 ns a reference against 0.2,
// and libmonitor sorts at the hand-over for 0.6-0.7.
void record_run(Runtime& rt, Constant* recording_switch, ArrayRef<Access> run, unsigned nosanitize_kind,
                MDNode* nosanitize) {
  Instruction* first = run.front().at;
  LLVMContext& c = first->getContext();
  Function* f = first->getFunction();
  Type* i8 = Type::getInt8Ty(c);
  Type* i64 = Type::getInt64Ty(c);
  PointerType* ptr = Type::getInt8PtrTy(c);
  auto* pair = FixedVectorType::get(i64, 2);
  const uint64_t n = run.size();
  MDNode* likely = MDBuilder(c).createBranchWeights(1 << 20, 1);
  IRBuilder<> b(c);
  auto mark = [&](Instruction* i) {
    i->setMetadata(nosanitize_kind, nosanitize);  // not for ASan or TSan, if also on
    return i;
  };
  auto relaxed_load = [&](Type* t, Value* p, unsigned align) {
    LoadInst* l = b.CreateLoad(t, p);
    l->setAtomic(AtomicOrdering::Monotonic);  // libmonitor writes them while the program may run
    l->setAlignment(Align(align));
    return mark(l);
  };
  auto field = [&](unsigned which) {
    return ConstantExpr::getInBoundsGetElementPtr(rt.cursor_type, rt.cursor,
                                                  ArrayRef<Constant*>{b.getInt32(0), b.getInt32(which), b.getInt32(0)});
  };
  Constant* next_at = field(0);

  // Per access i: head (the program's code before it) tests whether the
  // run records; recording tests whether it has room (fast); store or call;
  // then tail, which begins with the access. For the first access, head
  // loads the switch and recording loads the cursor, only while recording.
  Value* on = nullptr;
  Value* fast = nullptr;
  Value* at = nullptr;
  for (uint64_t i = 0; i < n; ++i) {
    const Access& x = run[i];
    const uint64_t meta = x.bytes | (x.type << 32);
    BasicBlock* head = x.at->getParent();
    BasicBlock* tail = SplitBlock(head, x.at);
    head->getTerminator()->eraseFromParent();
    BasicBlock* recording = BasicBlock::Create(c, "mri.recording", f, tail);
    BasicBlock* store = BasicBlock::Create(c, "mri.store", f, tail);
    BasicBlock* call = BasicBlock::Create(c, "mri.call", f, tail);

    b.SetInsertPoint(head);
    b.SetCurrentDebugLocation(x.at->getDebugLoc());
    if (i == 0) on = b.CreateICmpNE(relaxed_load(i8, recording_switch, 1), b.getInt8(0));
    b.CreateCondBr(on, recording, tail);
    b.SetInsertPoint(recording);
    if (i == 0) {
      Value* bits = relaxed_load(i64, b.CreateConstInBoundsGEP2_32(rt.split_type, rt.split, 0, 2), 8);
      at = mark(b.CreateLoad(ptr, next_at));
      Value* end = mark(b.CreateLoad(ptr, field(1)));
      Value* room = b.CreateSub(b.CreatePtrToInt(end, i64), b.CreatePtrToInt(at, i64));
      // Signed: a cursor past the end (put back by a commit that a
      // handler's hand-over overtook, instrument.cpp) has no room.
      fast = b.CreateAnd(b.CreateICmpEQ(bits, b.getInt64(0)), b.CreateICmpSGE(room, b.getInt64(16 * n)));
    }
    b.CreateCondBr(fast, store, call, likely);

    // One 16-byte store {address, size | type << 32}: the record is
    // Monitor_Cache_Access, and the buffers are 16-byte aligned.
    b.SetInsertPoint(store);
    Value* rec = b.CreateInsertElement(UndefValue::get(pair), b.CreatePtrToInt(x.address, i64), uint64_t(0));
    rec = b.CreateInsertElement(rec, b.getInt64(meta), uint64_t(1));
    Value* slot = b.CreateConstInBoundsGEP1_64(i8, at, 16 * i);
    mark(b.CreateAlignedStore(rec, b.CreateBitCast(slot, PointerType::getUnqual(pair)), Align(16)));
    if (i + 1 == n) {
      // The run's end: the cursor moves on unless something else moved it
      // (a run of one too: a handler that hands the buffer over between
      // the cursor's load and this store would otherwise make the older
      // records before `at` count again; one between the compare and the
      // store: instrument.cpp, Buffer).
      BasicBlock* advance = BasicBlock::Create(c, "mri.advance", f, tail);
      b.CreateCondBr(b.CreateICmpEQ(mark(b.CreateLoad(ptr, next_at)), at), advance, tail, likely);
      b.SetInsertPoint(advance);
      mark(b.CreateStore(b.CreateConstInBoundsGEP1_64(i8, at, 16 * n), next_at));
    }
    BasicBlock* stored = b.GetInsertBlock();
    b.CreateBr(tail);

    b.SetInsertPoint(call);
    b.CreateCall(rt.record, {b.CreatePointerCast(x.address, ptr), b.getInt64(meta)});
    b.CreateBr(tail);

    // The run's values for the next access, by the path taken (the store
    // was fast; the call made the rest of the run go through it). Nothing
    // of the run is live across the call, so the program's small functions
    // need no callee-saved registers for it (is_sort's helpers pushed and
    // popped five of them per call, dormant).
    if (i + 1 < n) {
      b.SetInsertPoint(&tail->front());
      auto carried = [&](Value* dormant, Value* stored_value, Value* after_call) {
        PHINode* phi = b.CreatePHI(dormant->getType(), 3);
        phi->addIncoming(dormant, head);
        phi->addIncoming(stored_value, stored);
        phi->addIncoming(after_call, call);
        return phi;
      };
      Value* null = ConstantPointerNull::get(ptr);
      on = carried(b.getFalse(), b.getTrue(), b.getTrue());
      fast = carried(b.getFalse(), b.getTrue(), b.getFalse());
      at = carried(null, at, null);
    }
  }
}

struct MemtracePass : PassInfoMixin<MemtracePass> {
  PreservedAnalyses run(Module& m, ModuleAnalysisManager&) {
    const DataLayout& layout = m.getDataLayout();
    std::unique_ptr<Runtime> rt;
    // "nosanitize" (a kind by name in LLVM 14): the sanitizers leave alone
    // what carries it, and so does this pass.
    const unsigned nosanitize_kind = m.getContext().getMDKindID("nosanitize");
    MDNode* nosanitize = MDNode::get(m.getContext(), {});
    bool changed = false, program = false;
    for (Function& f : m) {
      if (skipped(f)) continue;
      // The runs, collected first: the recording inserts blocks, loads and
      // stores of its own.
      std::vector<SmallVector<Access, 8>> runs;
      for (BasicBlock& bb : f) {
        SmallVector<Access, 8> run;
        auto close = [&] {
          if (!run.empty()) runs.push_back(std::move(run));
          run.clear();
        };
        for (Instruction& i : bb) {
          if (may_record(i)) {
            close();
            continue;
          }
          if (!(isa<LoadInst>(i) || isa<StoreInst>(i)) || i.getMetadata(nosanitize_kind)) continue;
          Value* address = getLoadStorePointerOperand(&i);
          if (address->getType()->getPointerAddressSpace() != 0) continue;  // %fs/%gs-relative and the like
          Type* t = isa<LoadInst>(i) ? i.getType() : cast<StoreInst>(i).getValueOperand()->getType();
          const TypeSize size = layout.getTypeStoreSize(t);
          if (size.isScalable() || size.getFixedSize() == 0 || size.getFixedSize() > UINT32_MAX) continue;
          run.push_back({&i, address, size.getFixedSize(), isa<StoreInst>(i) ? 1u : 0u});
          if (run.size() == kMaxRun) close();
        }
        close();
      }
      if (runs.empty()) continue;
      if (!rt) rt = std::make_unique<Runtime>(m);
      const bool calibrating = calibration(f);
      for (const auto& run : runs)
        record_run(*rt, calibrating ? rt->calibrating : rt->recording, run, nosanitize_kind, nosanitize);
      if (!calibrating) program = true;
      changed = true;
    }
    // The mark that the program records inline, for the runtime's choice
    // of calibration (a weak definition in every module that records: one
    // in the linked program).
    if (program && !m.getGlobalVariable("__mri_cachesim_inline")) {
      auto* i8 = Type::getInt8Ty(m.getContext());
      new GlobalVariable(m, i8, true, GlobalValue::WeakAnyLinkage, ConstantInt::get(i8, kAbiVersion),
                         "__mri_cachesim_inline");
    }
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "mri-memtrace", "1", [](PassBuilder& pb) {
            pb.registerOptimizerLastEPCallback(
                [](ModulePassManager& mpm, OptimizationLevel) { mpm.addPass(MemtracePass()); });
          }};
}
