package dev.nodelet.configmap.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration {@value ConfigMapManagerComponent#PID}. */
@ObjectClassDefinition(name = "Nodelet ConfigMap manager",
    description = "Keeps the ConfigMaps that the pods of this node reference.")
public @interface ConfigMapManagerConfiguration {

  @AttributeDefinition(name = "Strategy",
      description = "LDAP filter on the StoreStrategy services to use, e.g. (nodelet.strategy=ttl). While none "
          + "matches, every get asks the API server directly.")
  String strategy_target() default ConfigMapManagerComponent.DEFAULT_STRATEGY;
}
