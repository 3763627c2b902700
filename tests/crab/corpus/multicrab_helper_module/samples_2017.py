DATA_SAMPLES = {
    'Run2017B': '/JetHT/Run2017B-UL2017_MiniAODv2-v1/MINIAOD',
    'Run2017C': '/JetHT/Run2017C-UL2017_MiniAODv2-v1/MINIAOD',
    'Run2017F': '/JetHT/Run2017F-UL2017_MiniAODv2-v1/MINIAOD',
}


def request_name(era):
    return 'JetHT_%s_trigger_eff' % era
