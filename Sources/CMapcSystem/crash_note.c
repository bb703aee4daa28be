// What the process was doing when it crashed, said before the crash report: a custom policy is
// the user's own code, run in mapc's process, and a trap in it (an index out of range, a forced
// unwrap of nil) ends the process with the runtime's backtrace alone. The migration sets the
// context (which policy, mapping and hook) as it calls into a policy; the handler writes it to
// standard error and hands the signal back to the handler that was there before (the Swift
// runtime's backtracer), so the report that follows is unchanged.
#include "CMapcSystem.h"
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>

static char context[1024];
static volatile sig_atomic_t context_length = 0;
// What to say if the code called ends the process by exit() (which skips the migration's own
// ending) on the thread that set the context: the status then says the run failed.
static char exit_context[1024];
static volatile sig_atomic_t exit_context_length = 0;
static pthread_t context_thread;
static struct sigaction previous[65];
static const int signals[] = { SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT };

// Copies text into a context's buffer, its length made 0 while it changes (a handler reading it
// then writes nothing) and set last.
static void keep(char *buffer, size_t capacity, volatile sig_atomic_t *kept, const char *text) {
    *kept = 0;
    size_t length = strlen(text);
    if (length >= capacity) length = capacity - 1;
    memcpy(buffer, text, length);
    buffer[length] = 0;
    *kept = (sig_atomic_t)length;
}

void mapc_crash_context_set(const char *text) {
    keep(context, sizeof(context), &context_length, text);
}

void mapc_crash_context_clear(void) {
    context_length = 0;
    exit_context_length = 0;
}

void mapc_exit_context_set(const char *text) {
    exit_context_length = 0;
    context_thread = pthread_self();
    keep(exit_context, sizeof(exit_context), &exit_context_length, text);
}

// Writes "\nmapc: " and the text, then `end`, to standard error: async-signal-safe (write only).
static void write_note(const char *text, size_t length, const char *end) {
    static const char prefix[] = "\nmapc: ";
    ssize_t ignored = write(STDERR_FILENO, prefix, sizeof(prefix) - 1);
    ignored = write(STDERR_FILENO, text, length);
    ignored = write(STDERR_FILENO, end, strlen(end));
    (void)ignored;
}

// Runs at exit(): a policy called it while its mapping was being worked on, on the migration's
// thread. The run did not finish (the store is as it was); a status of 0 would say it had.
static void note_exit_in_context(void) {
    sig_atomic_t length = exit_context_length;
    if (length <= 0 || !pthread_equal(pthread_self(), context_thread)) return;
    // What the policy printed before it exited comes first (exit flushes after its handlers).
    fflush(NULL);
    write_note(exit_context, (size_t)length, "\n");
    _exit(3);
}

static void note_and_hand_over(int signal, siginfo_t *info, void *ucontext) {
    sig_atomic_t length = context_length;
    if (length > 0) {
        write_note(context, (size_t)length, "\n\n");
        context_length = 0;
    }
    // The handler that was there before takes over: for a fault, returning runs the faulting
    // instruction again, which now reaches it; for a signal sent, it is raised again.
    sigaction(signal, &previous[signal], NULL);
    if (info != NULL && info->si_code <= 0) raise(signal);
    (void)ucontext;
}

void mapc_crash_note_install(void) {
    atexit(note_exit_in_context);
    for (size_t index = 0; index < sizeof(signals) / sizeof(signals[0]); index++) {
        int signal = signals[index];
        struct sigaction action;
        memset(&action, 0, sizeof(action));
        action.sa_sigaction = note_and_hand_over;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        sigaction(signal, &action, &previous[signal]);
    }
}

void mapc_line_buffer_standard_output(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
}
