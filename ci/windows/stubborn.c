/*
 * A stubborn upstream server for the Windows stop tests (bridge/tests/windows_stop.rs): it
 * never reads its stdin (the end of stdin does not stop it), starts one child of its own
 * (`stubborn-upstream.exe child`), and waits 120 s. Only the bridge's job object ends the two:
 * the job's termination at the end of the stop sequence (R7) or its kill when its last handle
 * closes (the bridge killed from outside). The test finds both processes by the variable that
 * it sets on the bridge, which both inherit.
 */
#include <windows.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "child") != 0) {
        char self[MAX_PATH];
        char command[MAX_PATH + 16];
        STARTUPINFOA si;
        PROCESS_INFORMATION pi;
        DWORD n = GetModuleFileNameA(NULL, self, MAX_PATH);
        if (n == 0 || n >= MAX_PATH) {
            return 70;
        }
        lstrcpyA(command, "\"");
        lstrcatA(command, self);
        lstrcatA(command, "\" child");
        ZeroMemory(&si, sizeof si);
        si.cb = sizeof si;
        if (!CreateProcessA(NULL, command, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
            return 71;
        }
        CloseHandle(pi.hThread);
        CloseHandle(pi.hProcess);
    }
    Sleep(120000);
    return 0;
}
