import FWCore.ParameterSet.Config as cms
from FWCore.ParameterSet.VarParsing import VarParsing

options = VarParsing('analysis')
options.register('isMC', False, VarParsing.multiplicity.singleton, VarParsing.varType.bool, 'simulation')
options.register('era', '2018', VarParsing.multiplicity.singleton, VarParsing.varType.string, 'data era')
options.parseArguments()

process = cms.Process('NTUPLE')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring(options.inputFiles))
process.maxEvents = cms.untracked.PSet(input=cms.untracked.int32(-1))
process.ntuplizer = cms.EDAnalyzer('TopNtuplizer', isMC=cms.bool(options.isMC))
process.TFileService = cms.Service('TFileService', fileName=cms.string(options.outputFile))
process.p = cms.Path(process.ntuplizer)
