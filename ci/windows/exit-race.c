/* Shows, without the bridge, the race of wine 8.0 that ended the Windows bridge at its exit
 * (docs/windows.md, "The end of the process"): eight threads end at the moment the process
 * ends. Under wine 8.0 about 1 run in 20 is killed (exit status 137, SIGKILL, or 139, SIGSEGV)
 * instead of exiting 0; with the threads left blocked (no SetEvent) no run of 200 is.
 * Not run by CI. Build and loop:
 *   x86_64-w64-mingw32-gcc -O2 -o exit-race.exe ci/windows/exit-race.c
 *   for i in $(seq 200); do wine ./exit-race.exe; echo $?; done | sort | uniq -c
 */
#include <windows.h>

static HANDLE go;

static DWORD WINAPI worker(LPVOID unused) {
  (void)unused;
  WaitForSingleObject(go, INFINITE);
  return 0;
}

int main(void) {
  go = CreateEventW(NULL, TRUE, FALSE, NULL);
  for (int i = 0; i < 8; i++) CreateThread(NULL, 0, worker, NULL, 0, NULL);
  Sleep(20);
  /* The threads end now, while the process ends. */
  SetEvent(go);
  ExitProcess(0);
}
