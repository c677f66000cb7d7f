/**
 * The trusted Python runner that executes one candidate program inside the sandbox.
 *
 * It is copied into each fresh evaluation directory and started as
 * `python3 -I -B runner.py <mode> <tag>`, with `mode` one of:
 * - `ns`: started inside new user, mount, PID, network, IPC, UTS and cgroup namespaces. Before
 *   any candidate code runs it builds a private root file system (a tmpfs holding read-only bind
 *   mounts of the system directories and of the interpreter's own directories, a few device
 *   nodes, a fresh /proc and size-limited tmpfs mounts at /sandbox and /dev/shm), moves into it
 *   with pivot_root, detaches the old root, drops every capability and sets no_new_privs.
 * - `basic`: fallback without namespaces. When started as root it switches to `nobody`; it then
 *   installs an audit hook that refuses sockets, process creation, signals, ctypes and file
 *   access outside an allowlist.
 * - `probe`: like `ns` but runs no candidate code; used to test whether namespaces work here.
 *
 * In `ns` mode the runner is the first process of its PID namespace; it forks once and only reaps,
 * exiting with the program's status (128 + signal for a killed program), so that the program gets
 * ordinary signal semantics (e.g. SIGXCPU at the CPU-time limit).
 *
 * In every mode it applies resource limits, loads the data, runs `build_model` on each split's
 * training rows and writes the predicted probabilities of each split's test rows as JSON to file
 * descriptor 3. Scores are computed by the caller, not here.
 */
export const RUNNER_SOURCE = `
import json
import os
import resource
import sys

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
    resource.setrlimit(resource.RLIMIT_CPU, (limits['cpuSeconds'], limits['cpuSeconds'] + 1))
    cap(resource.RLIMIT_FSIZE, limits['fileSizeMb'] << 20)
    cap(resource.RLIMIT_NOFILE, 256)
    cap(resource.RLIMIT_CORE, 0)
    if own_process_count:
        cap(resource.RLIMIT_NPROC, limits['maxProcesses'])


def describe(exc):
    text = '%s: %s' % (type(exc).__name__, exc)
    return text[:2000]


def close_inherited_descriptors():
    # Only stdin, stdout, stderr and the result pipe stay open: descriptors the host process
    # inherited from its own parent (without close-on-exec) must not reach the program.
    try:
        fds = [int(fd) for fd in os.listdir('/proc/self/fd')]
    except OSError:
        fds = range(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    for fd in fds:
        if fd > RESULT_FD:
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
    if MODE == 'basic':
        install_guard(box)

    try:
        code = compile(task['source'], 'solution.py', 'exec')
    except SyntaxError as exc:
        fail('syntax', describe(exc))
    namespace = {'__name__': 'solution'}
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


if __name__ == '__main__':
    try:
        main()
    except BaseException as exc:
        if os.getpid() != MAIN_PID:
            os._exit(70)
        fail(classify(exc), describe(exc))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
`;
