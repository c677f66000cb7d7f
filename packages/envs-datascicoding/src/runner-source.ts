/**
 * The trusted Python runner that executes one candidate program inside the sandbox.
 *
 * It is copied into each fresh evaluation directory and started as
 * `python3 -s -B runner.py <mode> <tag>` (`-I` instead of `-s` under `os-seeded`; see
 * `commandLine`), with `mode` one of:
 * - `ns`: started inside new user, mount, PID, network, IPC, UTS and cgroup namespaces. Before
 *   any candidate code runs it builds a private root file system (a tmpfs holding read-only bind
 *   mounts of the system directories and of the interpreter's own directories, a few device
 *   nodes, a fresh /proc and size-limited tmpfs mounts at /sandbox and /dev/shm), moves into it
 *   with pivot_root, detaches the old root, drops every capability and sets no_new_privs.
 * - `basic`: fallback without namespaces. When started as root it switches to `nobody`; it then
 *   installs an audit hook that refuses sockets, process creation, signals, ctypes and file
 *   access outside an allowlist.
 * - `probe`: like `ns` but runs no candidate code; used to test whether namespaces work here.
 * - `serve`: the fork server. Started once (without namespaces, as `nobody` when Node is root),
 *   it imports numpy, SciPy and scikit-learn, then for each request forks a child that enters
 *   the same namespaces itself (unshare(2), uid/gid maps as `--map-root-user`) and forks the
 *   runner as process 1 of the new PID namespace, which continues exactly as in `ns` mode. A
 *   run thus skips the interpreter start and the imports (most of a small program's time) and
 *   is isolated as before. See `sandbox-server.ts` for the protocol.
 *
 * In `ns` mode the runner is the first process of its PID namespace; it forks once and only reaps,
 * exiting with the program's status (128 + signal for a killed program), so that the program gets
 * ordinary signal semantics (e.g. SIGXCPU at the CPU-time limit).
 *
 * In every mode it applies resource limits, loads the data, seeds the program's randomness
 * (`seed_randomness`), starts the program's CPU clock, runs `build_model` on each split's
 * training rows and writes the predicted probabilities of each split's test rows as JSON to file
 * descriptor 3. Scores are computed by the caller, not here.
 */
export const RUNNER_SOURCE = `
import os
import sys

# Under seeded-v1 the interpreter runs without -I (which would ignore the fixed PYTHONHASHSEED),
# so Python put this script's directory first on the module path; it goes, as -I leaves it out.
if not sys.flags.isolated and not getattr(sys.flags, 'safe_path', False) and sys.path:
    del sys.path[0]

import json
import resource

MODE = sys.argv[1]
MAIN_PID = os.getpid()
RESULT_FD = 3


def emit(obj):
    if os.getpid() != MAIN_PID:
        os._exit(70)
    data = json.dumps(obj, allow_nan=False).encode()
    view = memoryview(data)
    while view:
        n = os.write(RESULT_FD, view)
        view = view[n:]


def fail(reason, message):
    emit({'ok': False, 'reason': reason, 'error': message})
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def load_task(directory):
    with open(os.path.join(directory, 'task.json')) as f:
        return json.load(f)


# ---------------------------------------------------------------- namespace isolation (ns mode)
def build_private_root(task):
    import ctypes
    import platform
    import shutil

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                           ctypes.c_char_p]

    def mount(src, target, fstype, flags, data=None):
        enc = lambda s: None if s is None else s.encode()
        if libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)) != 0:
            err = ctypes.get_errno()
            raise OSError(err, 'mount %s: %s' % (target, os.strerror(err)))

    MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
    MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18

    box = os.getcwd()
    root = os.path.join(os.path.dirname(box), 'root')
    mount(None, '/', None, MS_REC | MS_PRIVATE)
    mount('tmpfs', root, 'tmpfs', MS_NOSUID | MS_NODEV, 'size=1m,mode=0755')
    for name in ('usr', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32', 'etc'):
        src = '/' + name
        dst = os.path.join(root, name)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        elif os.path.isdir(src):
            os.mkdir(dst)
            mount(src, dst, None, MS_BIND | MS_REC)
            flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID
            st = os.statvfs(src)
            if st.f_flag & os.ST_NODEV:
                flags |= MS_NODEV
            if st.f_flag & os.ST_NOEXEC:
                flags |= MS_NOEXEC
            try:
                mount(None, dst, None, flags)
            except OSError:
                pass  # read-only is best effort; the files belong to the host's root anyway
    # An interpreter installed elsewhere (a virtual environment, /opt) keeps its own files,
    # read-only, at the same paths; nothing else outside the system directories is visible.
    extra = []
    for path in [sys.prefix, sys.base_prefix, sys.exec_prefix] + sys.path:
        if not path or not os.path.isdir(path):
            continue
        real = os.path.realpath(path)
        if real == '/' or real.startswith(('/usr/', '/etc/', '/bin/', '/sbin/', '/lib')):
            continue
        if not any(real == p or real.startswith(p + '/') for p in extra):
            extra = [p for p in extra if not p.startswith(real + '/')] + [real]
    for path in extra:
        dst = root + path
        os.makedirs(dst, exist_ok=True)
        mount(path, dst, None, MS_BIND | MS_REC)
        try:
            mount(None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
        except OSError:
            pass
    os.mkdir(os.path.join(root, 'dev'))
    for dev in ('null', 'zero', 'full', 'random', 'urandom'):
        dst = os.path.join(root, 'dev', dev)
        open(dst, 'w').close()
        mount('/dev/' + dev, dst, None, MS_BIND)
    shm = os.path.join(root, 'dev', 'shm')
    os.mkdir(shm)
    mount('tmpfs', shm, 'tmpfs', MS_NOSUID | MS_NODEV, 'size=%dk,mode=1777' % task['limits']['diskKb'])
    os.mkdir(os.path.join(root, 'proc'))
    mount('proc', os.path.join(root, 'proc'), 'proc', MS_NOSUID | MS_NODEV | MS_NOEXEC)
    sandbox = os.path.join(root, 'sandbox')
    os.mkdir(sandbox)
    inputs = ('task.json', 'x.bin', 'y.bin')
    input_kb = sum(os.path.getsize(os.path.join(box, name)) for name in inputs) // 1024 + 64
    mount('tmpfs', sandbox, 'tmpfs', MS_NOSUID | MS_NODEV,
          'size=%dk,mode=0777' % (task['limits']['diskKb'] + input_kb))
    for name in inputs:
        shutil.copyfile(os.path.join(box, name), os.path.join(sandbox, name))

    nr = {'x86_64': 155, 'aarch64': 41, 'riscv64': 41, 'ppc64le': 203, 's390x': 217}
    machine = platform.machine()
    if machine not in nr:
        raise OSError('pivot_root: unsupported architecture ' + machine)
    os.chdir(root)
    if libc.syscall(nr[machine], b'.', b'.') != 0:
        err = ctypes.get_errno()
        raise OSError(err, 'pivot_root: ' + os.strerror(err))
    if libc.umount2(b'.', 2) != 0:  # MNT_DETACH: the host's file system leaves this namespace
        err = ctypes.get_errno()
        raise OSError(err, 'umount2: ' + os.strerror(err))
    os.chdir('/')
    mount(None, '/', None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir('/sandbox')

    # Give up every capability for good: no_new_privs, securebits that stop uid 0 from regaining
    # capabilities on exec, an empty bounding set, then empty permitted/effective/inheritable sets.
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                           ctypes.c_ulong]
    if libc.prctl(38, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'prctl(PR_SET_NO_NEW_PRIVS)')
    if libc.prctl(28, 0x3f, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'prctl(PR_SET_SECUREBITS)')
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)
    libc.prctl(47, 4, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [('version', ctypes.c_uint32), ('pid', ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [('effective', ctypes.c_uint32), ('permitted', ctypes.c_uint32),
                    ('inheritable', ctypes.c_uint32)]

    header = Header(0x20080522, 0)
    data = (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), 'capset')
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('CapEff:') and int(line.split()[1], 16) != 0:
                raise OSError('capabilities are still present after dropping them')


# ---------------------------------------------------------------- fallback guard (basic mode)
def install_guard(box):
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    readable = ('/usr/', '/lib/', '/lib64/', '/lib32/', '/etc/', '/sys/', '/dev/null', '/dev/urandom',
                '/proc/self/', '/proc/cpuinfo', '/proc/meminfo', box + '/')
    writable = (box + '/', '/dev/null')
    blocked = {
        'socket.__new__': 'network access is blocked in the sandbox',
        'socket.connect': 'network access is blocked in the sandbox',
        'socket.bind': 'network access is blocked in the sandbox',
        'socket.getaddrinfo': 'network access is blocked in the sandbox',
        'os.fork': 'starting processes is blocked in the sandbox',
        'os.forkpty': 'starting processes is blocked in the sandbox',
        'os.posix_spawn': 'starting processes is blocked in the sandbox',
        'os.spawn': 'starting processes is blocked in the sandbox',
        'os.exec': 'starting processes is blocked in the sandbox',
        'os.system': 'starting processes is blocked in the sandbox',
        'subprocess.Popen': 'starting processes is blocked in the sandbox',
        'os.kill': 'sending signals is blocked in the sandbox',
        'os.killpg': 'sending signals is blocked in the sandbox',
        'signal.pthread_kill': 'sending signals is blocked in the sandbox',
        'ctypes.dlopen': 'ctypes is blocked in the sandbox',
        'ctypes.dlsym': 'ctypes is blocked in the sandbox',
        'ctypes.call_function': 'ctypes is blocked in the sandbox',
        'ctypes.cdata': 'ctypes is blocked in the sandbox',
    }
    realpath = os.path.realpath
    # Only per-file sizes are limited on the host's disk, so the number of files opened for
    # writing is bounded too.
    written = [0]
    max_written = 64

    def hook(event, args):
        message = blocked.get(event)
        if message is not None:
            raise PermissionError(message)
        if event == 'open' and isinstance(args[0], (str, bytes)):
            path = args[0].decode() if isinstance(args[0], bytes) else args[0]
            path = realpath(path)
            mode = args[1] or 'r'
            flags = args[2] or 0
            writing = any(c in mode for c in 'wax+') or (flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            allowed = writable if writing else readable
            if path in ('/dev/null', '/dev/urandom'):
                return
            if not (path + '/').startswith(allowed):
                raise PermissionError('file access outside the sandbox is blocked: ' + path)
            if writing:
                written[0] += 1
                if written[0] > max_written:
                    raise PermissionError('the sandbox allows at most %d file openings for writing'
                                          % max_written)

    sys.addaudithook(hook)


# ---------------------------------------------------------------- main
def become_reaper():
    # The first process of a PID namespace ignores signals it has no handler for, so the program
    # runs in a child and this process only reaps. It exits with the child's status (128 + signal
    # number when the child was killed); its exit ends every process left in the namespace.
    global MAIN_PID
    child = os.fork()
    if child == 0:
        MAIN_PID = os.getpid()
        return
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(70)
        except InterruptedError:
            continue
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            os._exit(128 - code if code < 0 else code)


def apply_limits(limits, own_process_count):
    def cap(which, value):
        resource.setrlimit(which, (value, value))

    cap(resource.RLIMIT_AS, limits['memoryMb'] << 20)
    # Until the program starts (start_program_clock), the interpreter's start, the namespaces
    # and the imports may use CPU_ALLOWANCE seconds besides the program's own.
    cpu = limits['cpuSeconds'] + CPU_ALLOWANCE
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    cap(resource.RLIMIT_FSIZE, limits['fileSizeMb'] << 20)
    cap(resource.RLIMIT_NOFILE, 256)
    cap(resource.RLIMIT_CORE, 0)
    if own_process_count:
        cap(resource.RLIMIT_NPROC, limits['maxProcesses'])


CPU_ALLOWANCE = 30


def start_program_clock(limits):
    # The program's CPU time counts from here. A profiling timer (ITIMER_PROF, the process's CPU
    # time to the microsecond) ends the program with SIGPROF, whose default action ends a process
    # even inside a long C call, after exactly cpuSeconds. A program that disarms the timer or
    # handles the signal meets RLIMIT_CPU instead, lowered here to the CPU time used so far,
    # rounded up to whole seconds (its unit), plus cpuSeconds: SIGXCPU, and SIGKILL a second later.
    import math
    import signal
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = int(math.ceil(usage.ru_utime + usage.ru_stime))
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    soft = min(used + limits['cpuSeconds'], hard - 1)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    signal.signal(signal.SIGPROF, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_PROF, limits['cpuSeconds'])


def seed_randomness(seed):
    # seeded-v1: every source of randomness the program reaches without choosing a seed draws
    # from the program's seed (64 hex digits, derived from its text and its data by the caller):
    # - numpy's global RandomState (np.random.*, and scikit-learn's random_state=None), seeded
    #   with words of its own;
    # - Python's random module, seeded likewise, and every random.Random() made without a seed;
    # - new numpy generators without a seed (default_rng(), RandomState(), SeedSequence(), a bit
    #   generator, np.random.seed() without an argument), os.urandom, random.SystemRandom and
    #   the secrets module: one stream of bytes, SHA-256 of the seed and a counter, handed out in
    #   the order they are asked for.
    # String hashing is fixed by the interpreter's PYTHONHASHSEED (the same for every program).
    # os-seeded (seed None): numpy's global state from the operating system, as a new interpreter
    # would; this matters for a run forked from the server, which would otherwise share it.
    import numpy as np
    if seed is None:
        np.random.seed()
        return
    import hashlib
    import random
    import numpy.random.bit_generator as bit_generator
    key = bytes.fromhex(seed)

    def derived(name):
        return hashlib.sha256(key + b'\\0' + name).digest()

    np.random.seed(np.frombuffer(derived(b'numpy-global'), dtype='<u4'))
    stream_key = derived(b'entropy')
    stream = {'counter': 0, 'buffer': b''}

    def entropy(count):
        count = int(count)
        if count < 0:
            raise ValueError('negative argument not allowed')
        while len(stream['buffer']) < count:
            block = hashlib.sha256(stream_key + stream['counter'].to_bytes(8, 'little')).digest()
            stream['counter'] += 1
            stream['buffer'] += block
        out, stream['buffer'] = stream['buffer'][:count], stream['buffer'][count:]
        return out

    def randbits(k):
        k = int(k)
        if k <= 0:
            return 0
        n = (k + 7) // 8
        return int.from_bytes(entropy(n), 'little') >> (8 * n - k)

    os.urandom = entropy
    random._urandom = entropy
    bit_generator.randbits = randbits
    plain_seed = random.Random.seed

    def seed_or_stream(self, a=None, version=2):
        if a is None:
            a = int.from_bytes(entropy(32), 'little')
        return plain_seed(self, a, version)

    random.Random.seed = seed_or_stream
    random.seed = random._inst.seed
    random.seed(int.from_bytes(derived(b'python-random'), 'little'))


def describe(exc):
    text = '%s: %s' % (type(exc).__name__, exc)
    return text[:2000]


def close_inherited_descriptors(keep=RESULT_FD):
    # Only stdin, stdout, stderr and the result pipe stay open: descriptors the host process
    # inherited from its own parent (without close-on-exec) must not reach the program.
    try:
        fds = [int(fd) for fd in os.listdir('/proc/self/fd')]
    except OSError:
        fds = range(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    for fd in fds:
        if fd > keep:
            try:
                os.close(fd)
            except OSError:
                pass


def main():
    close_inherited_descriptors()
    box = os.getcwd()
    task = load_task(box)
    limits = task['limits']
    if MODE in ('ns', 'probe'):
        try:
            build_private_root(task)
        except Exception as exc:
            fail('sandbox', 'could not build the isolated root: ' + describe(exc))
        apply_limits(limits, True)
        if MODE == 'ns':
            become_reaper()
    else:
        apply_limits(limits, os.geteuid() == 0)
    sys.setrecursionlimit(1000)
    import numpy as np

    n, d = task['n'], task['d']
    x = np.fromfile('x.bin', dtype='<f8').reshape(n, d)
    y = np.fromfile('y.bin', dtype='<i8')
    if MODE == 'probe':
        import sklearn  # noqa: F401  (the isolated view must include scikit-learn)
        emit({'ok': True, 'probe': True, 'uid': os.getuid()})
        return
    if task.get('preload'):
        # The fork server's libraries, loaded before the seeding and the program's CPU clock (a
        # no-op when forked from the server, which has them): some imports draw randomness (the
        # multiprocessing module's key takes 32 bytes of os.urandom), and all take CPU time, so
        # a program in a new interpreter starts where a forked one does.
        preload()
    seed_randomness(task.get('seed'))
    if MODE == 'basic':
        install_guard(box)

    try:
        code = compile(task['source'], 'solution.py', 'exec')
    except SyntaxError as exc:
        fail('syntax', describe(exc))
    namespace = {'__name__': 'solution'}
    start_program_clock(limits)
    try:
        exec(code, namespace)
    except BaseException as exc:
        fail(classify(exc), describe(exc))
    build_model = namespace.get('build_model')
    if not callable(build_model):
        fail('no-model', 'the program does not define build_model')
    splits = []
    for i, split in enumerate(task['splits']):
        train = np.asarray(split['train'], dtype=np.int64)
        test = np.asarray(split['test'], dtype=np.int64)
        try:
            model = build_model(x[train].copy(), y[train].copy())
        except BaseException as exc:
            fail(classify(exc), 'split %d: %s' % (i, describe(exc)))
        if model is None or not callable(getattr(model, 'predict_proba', None)):
            fail('no-model', 'split %d: build_model returned %s, which has no predict_proba method'
                 % (i, type(model).__name__))
        try:
            proba = np.asarray(model.predict_proba(x[test].copy()), dtype=np.float64)
        except BaseException as exc:
            fail(classify(exc), 'split %d: predict_proba failed: %s' % (i, describe(exc)))
        if proba.ndim != 2 or proba.shape[0] != len(test):
            fail('bad-probabilities', 'split %d: predict_proba returned shape %s, expected (%d, classes)'
                 % (i, proba.shape, len(test)))
        if not np.isfinite(proba).all():
            fail('bad-probabilities', 'split %d: predict_proba returned NaN or infinite values' % i)
        splits.append({'cols': int(proba.shape[1]), 'proba': proba.ravel().tolist()})
    emit({'ok': True, 'splits': splits})


def classify(exc):
    if isinstance(exc, MemoryError):
        return 'memory-limit'
    if isinstance(exc, SystemExit):
        return 'exit'
    return 'exception'


def run():
    try:
        main()
    except BaseException as exc:
        if os.getpid() != MAIN_PID:
            os._exit(70)
        fail(classify(exc), describe(exc))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# ---------------------------------------------------------------- fork server (serve mode)
# Modules imported once by the server so that a forked run finds them loaded. Only trusted
# library code runs here; missing ones are skipped.
PRELOAD = (
    'numpy', 'scipy', 'sklearn', 'sklearn.base', 'sklearn.pipeline', 'sklearn.compose',
    'sklearn.preprocessing', 'sklearn.impute', 'sklearn.feature_selection',
    'sklearn.decomposition', 'sklearn.linear_model', 'sklearn.ensemble', 'sklearn.tree',
    'sklearn.neighbors', 'sklearn.naive_bayes', 'sklearn.svm', 'sklearn.discriminant_analysis',
    'sklearn.neural_network', 'sklearn.calibration', 'sklearn.model_selection',
    'sklearn.kernel_approximation', 'sklearn.gaussian_process', 'sklearn.semi_supervised',
    'sklearn.multiclass',
)
EVENT_FD = 4
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x10000000, 0x20000000, 0x40000000
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36


def preload():
    import importlib
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for name in PRELOAD:
            try:
                importlib.import_module(name)
            except Exception:
                pass


def send_event(obj):
    data = (json.dumps(obj) + '\\n').encode()
    view = memoryview(data)
    while view:
        view = view[os.write(EVENT_FD, view):]


def end_segment():
    # Ends what the previous run (or the start-up) wrote on stdout, stderr and the result pipe
    # with a line that no program can forge: its nonce is drawn after every sandboxed process
    # of the run has exited. The Node side cuts each stream at it.
    nonce = os.urandom(16).hex()
    mark = ('\\npoad-dsc-end-%s\\n' % nonce).encode()
    for fd in (1, 2, RESULT_FD):
        os.set_blocking(fd, True)  # a program may have made the shared pipe non-blocking
        view = memoryview(mark)
        while view:
            view = view[os.write(fd, view):]
    return nonce


def launch(box, mode, libc, server_pid):
    # The forked child: leaves the server's session, dies with the server, enters new
    # namespaces (as unshare --user --map-root-user --net --mount --pid --ipc --uts --cgroup
    # --fork --kill-child does) and forks the runner as process 1 of the new PID namespace.
    global MAIN_PID, MODE
    MAIN_PID = os.getpid()
    try:
        import signal
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
        if os.getppid() != server_pid:
            os._exit(70)
        devnull = os.open('/dev/null', os.O_RDONLY)
        os.dup2(devnull, 0)
        close_inherited_descriptors()
        os.chdir(box)
        uid, gid = os.geteuid(), os.getegid()
        flags = (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
                 | CLONE_NEWUTS | CLONE_NEWCGROUP)
        if libc.unshare(flags) != 0:
            import ctypes
            err = ctypes.get_errno()
            raise OSError(err, 'unshare: ' + os.strerror(err))
        for name, text in (('setgroups', 'deny'), ('uid_map', '0 %d 1' % uid),
                           ('gid_map', '0 %d 1' % gid)):
            with open('/proc/self/' + name, 'w') as f:
                f.write(text)
        # The child's parent-death signal only covers a parent that dies after it is set. Its
        # parent lives outside the new PID namespace, so getppid() says 0 either way; instead the
        # child looks at this pipe: its write end closes when this process dies, before the
        # kernel would signal the children.
        alive_r, alive_w = os.pipe()
        child = os.fork()
    except BaseException as exc:
        fail('sandbox', 'could not enter the namespaces: ' + describe(exc))
    if child == 0:
        libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
        os.close(alive_w)
        import select
        if select.select([alive_r], [], [], 0)[0]:  # end of file: the launcher is gone
            os._exit(70)
        os.close(alive_r)
        MAIN_PID = os.getpid()
        MODE = mode
        run()
    while True:
        try:
            pid, status = os.waitpid(child, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(70)
        if os.WIFSIGNALED(status):
            os.kill(os.getpid(), os.WTERMSIG(status))
        os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 70)


def serve():
    # Requests, one JSON line each on stdin: {"box": DIR, "mode": "ns" | "probe"} starts a run,
    # {"kill": true} stops the running one. Events, one JSON line each on descriptor 4:
    # {"ready"}, {"started"} and {"done"} with the nonce that ends the run's output segments.
    # One run at a time; stdout, stderr and descriptor 3 are shared by the runs in turn.
    import ctypes
    import select
    import signal
    close_inherited_descriptors(keep=EVENT_FD)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                           ctypes.c_ulong]
    libc.unshare.argtypes = [ctypes.c_int]
    # Orphans of a run (its namespace's first process, when the launching child was killed)
    # come back here, so that a run is over only when every one of its processes is.
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    preload()
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    server_pid = os.getpid()
    pending = b''

    def next_line(block):
        nonlocal pending
        while b'\\n' not in pending:
            if not block and not select.select([0], [], [], 0)[0]:
                return None
            chunk = os.read(0, 65536)
            if not chunk:
                raise EOFError
            pending += chunk
        line, pending = pending.split(b'\\n', 1)
        return json.loads(line)

    send_event({'ready': True, 'pid': server_pid, 'nonce': end_segment()})
    while True:
        try:
            request = next_line(True)
        except EOFError:
            os._exit(0)
        if 'box' not in request:
            continue
        launcher = os.fork()
        if launcher == 0:
            launch(request['box'], request.get('mode', 'ns'), libc, server_pid)
        send_event({'started': True, 'pid': launcher})
        status = None
        closing = False
        while True:
            try:
                pid, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == launcher:
                status = st
            if pid != 0:
                continue
            ready = select.select([0, wake_r], [], [])[0]
            if wake_r in ready:
                try:
                    os.read(wake_r, 4096)
                except BlockingIOError:
                    pass
            if 0 in ready and not closing:
                try:
                    message = next_line(False)
                except EOFError:
                    message, closing = {'kill': True}, True
                if message is not None and message.get('kill'):
                    try:
                        os.killpg(launcher, 9)
                    except ProcessLookupError:
                        pass
        code = os.waitstatus_to_exitcode(status) if status is not None else 70
        send_event({'done': True, 'code': code, 'nonce': end_segment()})
        if closing:
            os._exit(0)


if __name__ == '__main__':
    if MODE == 'serve':
        serve()
    run()
`;
