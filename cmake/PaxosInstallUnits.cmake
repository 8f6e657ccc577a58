# SPDX-License-Identifier: BSD-3-Clause
# Runs at install time (install(CODE) in CMakeLists.txt), when CMAKE_INSTALL_PREFIX is the
# prefix actually installed to (cmake --install --prefix P included): writes the systemd units
# from systemd/paxos-role@.service.in with the installed binaries' and paxos.conf's paths, so
# they run from any prefix. Set by the caller: PAXOS_SOURCE_DIR, PAXOS_WORK_DIR, and the
# directories as GNUInstallDirs names them (relative to the prefix, or absolute):
# PAXOS_BINDIR, PAXOS_SYSCONFDIR, PAXOS_UNITDIR.
foreach(dir BINDIR SYSCONFDIR UNITDIR)
  if(NOT IS_ABSOLUTE "${PAXOS_${dir}}")
    set(PAXOS_${dir} "${CMAKE_INSTALL_PREFIX}/${PAXOS_${dir}}")
  endif()
endforeach()
set(BINDIR "${PAXOS_BINDIR}")
set(CONFDIR "${PAXOS_SYSCONFDIR}/paxos")
foreach(ROLE acceptor proposer learner)
  if(ROLE STREQUAL "learner")
    # Learners have no id: the instance names the file of deliveries.
    set(ARGS "-o %S/paxos/learner-%i.out")
    set(INSTANCE "paxos-learner@NAME writes its deliveries to /var/lib/paxos/learner-NAME.out")
  else()
    set(ARGS "-i %i")
    set(INSTANCE "paxos-${ROLE}@ID runs ${ROLE} ID of paxos.conf (0 .. ${ROLE}s-1)")
  endif()
  set(unit "${PAXOS_WORK_DIR}/paxos-${ROLE}@.service")
  configure_file("${PAXOS_SOURCE_DIR}/systemd/paxos-role@.service.in" "${unit}" @ONLY)
  file(INSTALL "${unit}" DESTINATION "${PAXOS_UNITDIR}")
endforeach()
