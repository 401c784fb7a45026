package dev.nodelet.node.internal;

/** Facts of a made-up machine, so that tests know every value the node reports. */
final class Facts {

  private Facts() {
  }

  static HostFacts of(int cpus) {
    return new HostFacts(cpus, 4L << 30, 100L << 30, "10.0.0.7", "linux", "amd64", "Debian GNU/Linux 12 (bookworm)",
        "6.1.0-test", "osgi://org.apache.felix.framework/7.0.5", "0.2.0-SNAPSHOT", "4c4c45440038", "boot-1");
  }
}
