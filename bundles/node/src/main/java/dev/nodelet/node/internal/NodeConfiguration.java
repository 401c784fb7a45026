package dev.nodelet.node.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration {@value NodeComponent#PID}. */
@ObjectClassDefinition(name = "Nodelet node",
    description = "Node mode: registers this Nodelet as a Kubernetes Node (the name of dev.nodelet.kube), renews its "
        + "Lease in kube-node-lease and reports its status, as a kubelet does. Off unless enabled.")
public @interface NodeConfiguration {

  @AttributeDefinition(name = "Enabled",
      description = "Register and keep this node. Off by default: without it Nodelet writes no Node and no Lease.")
  boolean enabled() default false;

  @AttributeDefinition(name = "Labels",
      description = "key=value labels set on the Node when it is created, besides kubernetes.io/hostname, "
          + "kubernetes.io/os and kubernetes.io/arch (which the node sets itself), as the kubelet's --node-labels.")
  String[] labels() default {};

  @AttributeDefinition(name = "Taints",
      description = "key=value:Effect or key:Effect taints set on the Node when it is created (never on a Node that "
          + "exists already), as the kubelet's --register-with-taints; Effect is NoSchedule, PreferNoSchedule or "
          + "NoExecute. Empty for none.")
  String[] taints() default {"nodelet.dev/bundles=true:NoSchedule"};

  @AttributeDefinition(name = "Maximum pods",
      description = "The node's pods capacity (and allocatable), as the kubelet's --max-pods. 1 to 10000.",
      min = "1", max = "10000")
  int max_pods() default 110;

  @AttributeDefinition(name = "Kubelet port",
      description = "The port of the node's API that the API server reaches (/containerLogs), reported as "
          + "daemonEndpoints.kubeletEndpoint.Port. 1 to 65535.", min = "1", max = "65535")
  int kubelet_port() default 10250;

  @AttributeDefinition(name = "Address",
      description = "The node's InternalIP address. Empty: the first IPv4 address of an interface that is up and "
          + "not a loopback, else the host's address.")
  String address() default "";

  @AttributeDefinition(name = "Host name",
      description = "The node's Hostname address and its kubernetes.io/hostname label. Empty: the node name.")
  String hostname() default "";

  @AttributeDefinition(name = "Reserved CPU",
      description = "CPU kept back from the pods (allocatable = capacity - reserved), a quantity such as 500m. "
          + "Default 0.")
  String reserved_cpu() default "0";

  @AttributeDefinition(name = "Reserved memory",
      description = "Memory kept back from the pods (allocatable = capacity - reserved), a quantity such as 256Mi. "
          + "The capacity is the JVM's maximum heap. Default 0.")
  String reserved_memory() default "0";

  @AttributeDefinition(name = "Ephemeral storage path",
      description = "A folder on the file system whose size is reported as ephemeral-storage. Empty: the "
          + "framework's storage folder, else the temporary folder.")
  String ephemeral_storage_path() default "";
}
